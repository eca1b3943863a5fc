// Caps how many live event streams one account holds open at once, so a
// client that leaks connections cannot pin the server's sockets and timers.
// Polling GET /api/v2/jobs/{id} is never limited by this.
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
  const open = new Map<string, number>();

  return {
    acquire(accountId) {
      const n = open.get(accountId) ?? 0;
      if (n >= max) {
        throw new ApiError(
          'too_many_streams',
          `Too many open event streams (at most ${max}). Close one, or poll GET /api/v2/jobs/{id} instead.`,
          { limit: max },
          { 'Retry-After': String(retryAfter) },
        );
      }
      open.set(accountId, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(accountId) ?? 1) - 1;
        if (left > 0) open.set(accountId, left);
        else open.delete(accountId);
      };
    },
    count: (accountId) => open.get(accountId) ?? 0,
  };
}
