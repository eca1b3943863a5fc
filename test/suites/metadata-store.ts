// The one conformance suite every MetadataStore runs (memory, SQLite, later
// PostgreSQL). Each test gets a fresh store from `make`; the asset and blob
// cases live in metadata-store-assets.ts, the job cases in job-store.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore } from '../../storage/types.ts';
import { jobStoreCases } from './job-store.ts';
import { assetCases } from './metadata-store-assets.ts';

export interface MetadataStoreFixture {
  store: MetadataStore;
  cleanup(): Promise<void>;
}

import { T0 } from './store-fixtures.ts';

export function metadataStoreSuite(name: string, make: () => Promise<MetadataStoreFixture>): void {
  describe(`MetadataStore conformance: ${name}`, () => {
    let store: MetadataStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    describe('schema and settings', () => {
      it('migrate is safe to run again', async () => {
        await store.migrate();
        await store.migrate();
        expect(await store.getSetting('missing')).toBeNull();
      });

      it('initSetting: the first writer wins, also when racing', async () => {
        expect(await store.initSetting('secret', 'one')).toBe('one');
        expect(await store.initSetting('secret', 'two')).toBe('one');
        expect(await store.getSetting('secret')).toBe('one');
        const raced = await Promise.all(['x', 'y', 'z'].map((v) => store.initSetting('raced', v)));
        expect(new Set(raced).size).toBe(1);
        expect(await store.getSetting('raced')).toBe(raced[0]);
      });
    });

    describe('accounts and API keys', () => {
      it('upserts accounts: default tier, explicit tier, keeps created_at', async () => {
        const a = await store.upsertAccount({ id: 'acc1' });
        expect(a).toEqual({ id: 'acc1', tier: expect.any(String), created_at: expect.any(Number) });
        const b = await store.upsertAccount({ id: 'acc1', tier: 'pro' });
        expect(b).toEqual({ ...a, tier: 'pro' });
        expect(await store.upsertAccount({ id: 'acc1' })).toEqual(b); // no tier given: tier kept
      });

      it('finds accounts by API key hash only', async () => {
        const acc = await store.upsertAccount({ id: 'acc1', tier: 'pro' });
        await store.replaceApiKeys([
          { account_id: 'acc1', key_hash: 'sha256:aa' },
          { account_id: 'ghost', key_hash: 'sha256:cc' },
        ]);
        await store.replaceApiKeys([
          { account_id: 'acc1', key_hash: 'sha256:aa' },
          { account_id: 'acc1', key_hash: 'sha256:aa' }, // listed twice: harmless
          { account_id: 'ghost', key_hash: 'sha256:cc' },
        ]);
        expect(await store.findAccountByKeyHash('sha256:aa')).toEqual(acc);
        expect(await store.findAccountByKeyHash('sha256:bb')).toBeNull();
        expect(await store.findAccountByKeyHash('sha256:cc')).toBeNull(); // no such account
      });

      it('drops keys that the new set no longer lists', async () => {
        const acc = await store.upsertAccount({ id: 'acc1' });
        await store.replaceApiKeys([{ account_id: 'acc1', key_hash: 'sha256:old' }]);
        await store.replaceApiKeys([{ account_id: 'acc1', key_hash: 'sha256:new' }]);
        expect(await store.findAccountByKeyHash('sha256:old')).toBeNull();
        expect(await store.findAccountByKeyHash('sha256:new')).toEqual(acc);
        await store.replaceApiKeys([]);
        expect(await store.findAccountByKeyHash('sha256:new')).toBeNull();
      });
    });

    describe('idempotency keys', () => {
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

    assetCases(() => store);
    jobStoreCases(() => store);
  });
}
