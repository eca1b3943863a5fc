// Accounts and the hashes of their API keys: what authentication reads on
// every request and what the configuration writes at every start.

/** An account owns assets; `tier` drives scheduling in later surfaces. */
export interface AccountRecord {
  id: string;
  tier: string;
  created_at: number;
}

export interface AccountStore {
  upsertAccount(account: { id: string; tier?: string }): Promise<AccountRecord>;
  /**
   * Replaces every stored API key with this set (hashes only; the plaintext
   * never reaches storage). The configuration is the source of truth, so a
   * key removed from it stops working at the next start.
   */
  replaceApiKeys(keys: Array<{ account_id: string; key_hash: string }>): Promise<void>;
  findAccountByKeyHash(keyHash: string): Promise<AccountRecord | null>;
}
