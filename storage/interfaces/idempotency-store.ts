// Idempotency keys: a claim per (account, key) that makes a retried request
// find the first one's claim instead of doing the work twice.

export interface IdempotencyStore {
  /**
   * Claims an idempotency key for one account. Returns false when a live
   * (unexpired) claim exists already; an expired claim is replaced.
   */
  claimIdempotencyKey(accountId: string, key: string, now: number, expiresAt: number): Promise<boolean>;
  releaseIdempotencyKey(accountId: string, key: string): Promise<void>;
  /** Removes claims whose expiry is at or before `now`; returns how many. */
  deleteExpiredIdempotencyKeys(now: number): Promise<number>;
}
