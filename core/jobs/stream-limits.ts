// Caps how many live event streams one account holds open at once, so a
// client that leaks connections cannot pin the server's sockets and timers.
// Polling GET /api/v2/jobs/{id} is never limited by this.
import { createAccountSlots } from '../account-slots.ts';
import { ApiError } from '../errors.ts';

export interface StreamLimiter {
  /** Takes a slot for the account, or throws a 429; the returned release is idempotent. */
  acquire(accountId: string): () => void;
  /** Streams the account has open now. */
  count(accountId: string): number;
}

export interface StreamLimiterOptions {
  /** Retry-After seconds on refusal. */
  retryAfterSeconds?: number;
}

export function createStreamLimiter(max: number, options: StreamLimiterOptions = {}): StreamLimiter {
  if (!(Number.isInteger(max) && max >= 1) && max !== Infinity) {
    throw new RangeError(`max must be a positive integer or Infinity, got ${max}`);
  }
  const retryAfter = options.retryAfterSeconds ?? 5;
  const slots = createAccountSlots(max);

  return {
    acquire(accountId) {
      const release = slots.tryAcquire(accountId);
      if (release) return release;
      throw new ApiError(
        'too_many_streams',
        `Too many open event streams (at most ${max}). Close one, or poll GET /api/v2/jobs/{id} instead.`,
        { limit: max },
        { 'Retry-After': String(retryAfter) },
      );
    },
    count: slots.count,
  };
}
