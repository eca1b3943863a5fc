// IdempotencyStore conformance: one live claim per account and key, of
// racing claims exactly one wins, expired claims give way and are swept.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../../storage/types.ts';
import { type MakeStore, T0 } from './store-fixtures.ts';

export function idempotencyStoreSuite(make: MakeStore<IdempotencyStore>): void {
  describe('IdempotencyStore', () => {
    let store: IdempotencyStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it('claims once per account and key', async () => {
      expect(await store.claimIdempotencyKey('acc1', 'k', T0, T0 + 1000)).toBe(true);
      expect(await store.claimIdempotencyKey('acc1', 'k', T0 + 1, T0 + 1001)).toBe(false);
      expect(await store.claimIdempotencyKey('acc2', 'k', T0, T0 + 1000)).toBe(true);
      expect(await store.claimIdempotencyKey('acc1', 'other', T0, T0 + 1000)).toBe(true);
    });

    it('replaces an expired claim, and the new claim then holds', async () => {
      await store.claimIdempotencyKey('acc1', 'k', T0, T0 + 1000);
      expect(await store.claimIdempotencyKey('acc1', 'k', T0 + 999, T0 + 1999)).toBe(false);
      expect(await store.claimIdempotencyKey('acc1', 'k', T0 + 1000, T0 + 2000)).toBe(true);
      expect(await store.claimIdempotencyKey('acc1', 'k', T0 + 1500, T0 + 2500)).toBe(false);
    });

    it('release frees the key', async () => {
      await store.claimIdempotencyKey('acc1', 'k', T0, T0 + 1000);
      await store.releaseIdempotencyKey('acc1', 'k');
      await store.releaseIdempotencyKey('acc1', 'never-claimed');
      expect(await store.claimIdempotencyKey('acc1', 'k', T0, T0 + 1000)).toBe(true);
    });

    it('exactly one of concurrent claims wins, for new and for expired keys', async () => {
      const fresh = await Promise.all(Array.from({ length: 8 }, () => store.claimIdempotencyKey('acc1', 'k', T0, T0 + 10)));
      expect(fresh.filter(Boolean)).toHaveLength(1);
      const later = T0 + 10;
      const reclaimed = await Promise.all(Array.from({ length: 8 }, () => store.claimIdempotencyKey('acc1', 'k', later, later + 10)));
      expect(reclaimed.filter(Boolean)).toHaveLength(1);
    });

    it('deleteExpiredIdempotencyKeys removes only expired claims', async () => {
      await store.claimIdempotencyKey('acc1', 'old', T0, T0 + 10);
      await store.claimIdempotencyKey('acc1', 'new', T0, T0 + 100);
      expect(await store.deleteExpiredIdempotencyKeys(T0 + 50)).toBe(1);
      expect(await store.claimIdempotencyKey('acc1', 'old', T0, T0 + 10)).toBe(true); // row was gone
      expect(await store.claimIdempotencyKey('acc1', 'new', T0, T0 + 100)).toBe(false);
    });
  });
}
