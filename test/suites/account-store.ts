// AccountStore conformance: accounts keep their creation time and take a
// tier; the configured API key hashes are the whole truth.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore } from '../../storage/types.ts';
import type { MakeStore } from './store-fixtures.ts';

export function accountStoreSuite(make: MakeStore<AccountStore>): void {
  describe('AccountStore', () => {
    let store: AccountStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

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
}
