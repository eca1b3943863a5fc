// When a failed delivery is tried again: exponential backoff from the first
// retry's delay, capped, with jitter where the settings ask for it, and
// whether the delivery is given up instead (out of tries, or too old).
import type { RetrySettings } from './settings.ts';

/** Delay before try `attempt + 1` after try `attempt` (1-based) failed. */
export function retryDelay(settings: RetrySettings, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(settings.initialDelayMs * 2 ** (attempt - 1), settings.maxDelayMs);
  return settings.jitter ? Math.round(base * (0.8 + 0.4 * random())) : base;
}

/** The next try's time, or null when the delivery is to be given up after try `attempt`. */
export function nextAttemptAt(settings: RetrySettings, attempt: number, createdAt: number, now: number): number | null {
  if (attempt >= settings.attempts) return null;
  const at = now + retryDelay(settings, attempt);
  return at - createdAt > settings.maxAgeMs ? null : at;
}
