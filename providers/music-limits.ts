// The music request's bounds and price, shared by the endpoint and the
// partner node so both accept and charge alike.
export const MAX_PROMPT_CHARS = 2000;
/** Seconds. */
export const MIN_DURATION = 1;
export const MAX_DURATION = 300;
export const DEFAULT_DURATION = 30;

/** Credits of one generation: one per started 10 seconds of audio. */
export const musicCredits = (durationSeconds: number) => Math.ceil(durationSeconds / 10);

/** Why a (trimmed) prompt is refused, or null. */
export function promptProblem(prompt: string): string | null {
  if (prompt === '') return 'prompt: must not be empty';
  if ([...prompt].length > MAX_PROMPT_CHARS) return `prompt: must be at most ${MAX_PROMPT_CHARS} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(prompt)) return 'prompt: must not contain control characters';
  return null;
}

/** Why a duration in seconds is refused, or null. */
export function durationProblem(seconds: number): string | null {
  if (!Number.isFinite(seconds) || seconds < MIN_DURATION || seconds > MAX_DURATION) {
    return `duration: must be from ${MIN_DURATION} to ${MAX_DURATION} seconds, got ${seconds}`;
  }
  return null;
}
