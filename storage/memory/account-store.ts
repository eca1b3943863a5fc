// In-process AccountStore: accounts by id, and API key hashes pointing at them.
import type { AccountRecord, AccountStore } from '../types.ts';

const DEFAULT_TIER = 'default';

/** `tierOf` is for the job store beside it, whose counts by tier read the accounts as the SQL join does. */
export function createMemoryAccountStore(): AccountStore & { tierOf(id: string): string } {
  const accounts = new Map<string, AccountRecord>();
  const apiKeys = new Map<string, string>(); // key hash -> account id
  return {
    async upsertAccount({ id, tier }) {
      const existing = accounts.get(id);
      const record: AccountRecord = existing
        ? { ...existing, tier: tier ?? existing.tier }
        : { id, tier: tier ?? DEFAULT_TIER, created_at: Date.now() };
      accounts.set(id, record);
      return { ...record };
    },
    async replaceApiKeys(keys) {
      apiKeys.clear();
      for (const k of keys) apiKeys.set(k.key_hash, k.account_id);
    },
    async findAccountByKeyHash(keyHash) {
      // A key may name an account not configured (yet): it finds nothing, as the SQL join does.
      const id = apiKeys.get(keyHash);
      const account = id === undefined ? undefined : accounts.get(id);
      return account ? { ...account } : null;
    },
    tierOf: (id) => accounts.get(id)?.tier ?? DEFAULT_TIER,
  };
}
