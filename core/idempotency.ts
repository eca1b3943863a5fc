// `Idempotency-Key`: single use per account, reject-on-duplicate (no replay).
// The key is claimed before any work, so concurrent duplicates are refused too,
// and released again when the request failed before it stored anything.
import type { AccountRecord } from '../storage/types.ts';
import type { ServiceContext } from './context.ts';
import { ApiError, invalid } from './errors.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface Commitment {
  /** Call once the request's effect is durable: from then on the key stays used. */
  committed(): void;
}

export async function withIdempotency<T>(
  ctx: ServiceContext,
  request: Request,
  account: AccountRecord,
  work: (c: Commitment) => Promise<T>,
): Promise<T> {
  const key = request.headers.get('idempotency-key');
  let done = false;
  const commitment: Commitment = { committed: () => void (done = true) };
  if (key === null) return work(commitment);
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw invalid('Idempotency-Key must be 1 to 255 visible ASCII characters.', 'Idempotency-Key', 'invalid');
  }
  const now = ctx.now();
  if (!(await ctx.metadata.claimIdempotencyKey(account.id, key, now, now + IDEMPOTENCY_TTL_MS))) {
    throw new ApiError('idempotency_key_reuse', 'This Idempotency-Key was already used; send a new key for a new request.');
  }
  try {
    return await work(commitment);
  } catch (err) {
    if (!done) {
      await ctx.metadata
        .releaseIdempotencyKey(account.id, key)
        .catch((e) => ctx.logger.error('idempotency key release failed', { error: String(e) }));
    }
    throw err;
  }
}
