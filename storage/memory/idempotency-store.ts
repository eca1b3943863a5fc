// In-process IdempotencyStore. Check and write happen without an await in
// between, so on one event loop exactly one of racing claims wins, as the
// SQL store's single INSERT ... ON CONFLICT makes it.
import type { IdempotencyStore } from '../types.ts';

export function createMemoryIdempotencyStore(): IdempotencyStore {
  const claims = new Map<string, { expires_at: number }>(); // `${account}\0${key}`
  const idemKey = (accountId: string, key: string) => `${accountId}\0${key}`;
  return {
    async claimIdempotencyKey(accountId, key, now, expiresAt) {
      const k = idemKey(accountId, key);
      const existing = claims.get(k);
      if (existing && existing.expires_at > now) return false;
      claims.set(k, { expires_at: expiresAt });
      return true;
    },
    async releaseIdempotencyKey(accountId, key) {
      claims.delete(idemKey(accountId, key));
    },
    async deleteExpiredIdempotencyKeys(now) {
      let n = 0;
      for (const [k, v] of claims) {
        if (v.expires_at <= now) {
          claims.delete(k);
          n++;
        }
      }
      return n;
    },
  };
}
