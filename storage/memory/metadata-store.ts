// In-process MetadataStore over plain maps: for tests, examples and
// single-process use without persistence. Mirrors the SQL store's semantics
// (unique blob hash, live = no expiry or expiry after `now`) so both pass the
// same conformance suite. Job methods come from job-store.ts.
import type {
  AccountRecord,
  AssetRecord,
  BlobRecord,
  CommitAssetResult,
  MetadataStore,
  NewAsset,
} from '../types.ts';
import { createMemoryJobStore } from './job-store.ts';
import { createMemoryVideoTaskStore } from './video-task-store.ts';

const DEFAULT_TIER = 'default';

const isLive = (a: { expires_at: number | null }, now: number) => a.expires_at === null || a.expires_at > now;

export function createMemoryMetadataStore(): MetadataStore {
  const settings = new Map<string, string>();
  const accounts = new Map<string, AccountRecord>();
  const apiKeys = new Map<string, string>(); // key hash -> account id
  const idempotency = new Map<string, { expires_at: number }>(); // `${account}\0${key}`
  const blobs = new Map<string, BlobRecord>();
  const assets = new Map<string, NewAsset>();
  const blocked = new Set<string>();

  // Copies out, so callers can never mutate the stored records.
  const view = (a: NewAsset): AssetRecord => {
    const blob = blobs.get(a.blob_key)!;
    return { ...a, node_id: a.node_id ?? null, output_type: a.output_type ?? null, tags: [...a.tags], hash: blob.hash, size_bytes: blob.size };
  };
  const hashTaken = (hash: string | null, key: string) =>
    hash !== null && [...blobs.values()].some((b) => b.hash === hash && b.key !== key);
  const idemKey = (accountId: string, key: string) => `${accountId}\0${key}`;

  return {
    ...createMemoryJobStore(() => [...assets.values()].map(view)),
    ...createMemoryVideoTaskStore(),
    async migrate() {},

    async getSetting(key) {
      return settings.get(key) ?? null;
    },
    async initSetting(key, value) {
      if (!settings.has(key)) settings.set(key, value);
      return settings.get(key)!;
    },

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
      const id = apiKeys.get(keyHash);
      const account = id === undefined ? undefined : accounts.get(id);
      return account ? { ...account } : null;
    },

    async claimIdempotencyKey(accountId, key, now, expiresAt) {
      const k = idemKey(accountId, key);
      const existing = idempotency.get(k);
      if (existing && existing.expires_at > now) return false;
      idempotency.set(k, { expires_at: expiresAt });
      return true;
    },
    async releaseIdempotencyKey(accountId, key) {
      idempotency.delete(idemKey(accountId, key));
    },
    async deleteExpiredIdempotencyKeys(now) {
      let n = 0;
      for (const [k, v] of idempotency) {
        if (v.expires_at <= now) {
          idempotency.delete(k);
          n++;
        }
      }
      return n;
    },

    async commitAsset(blob, asset): Promise<CommitAssetResult> {
      // Check every constraint before writing anything: the SQL store rolls
      // back a failed commit, so a failure here must leave no trace either.
      if (assets.has(asset.id)) throw new Error(`asset ${asset.id} already exists`);
      const blobCreated = !blobs.has(blob.key);
      if (blobCreated && hashTaken(blob.hash, blob.key)) throw new Error(`blob hash ${blob.hash} already exists`);
      if (blobCreated) blobs.set(blob.key, { ...blob, created_at: Date.now() });
      assets.set(asset.id, { ...asset, node_id: asset.node_id ?? null, output_type: asset.output_type ?? null, tags: [...asset.tags] });
      return { asset: view(assets.get(asset.id)!), blob_created: blobCreated };
    },
    async setBlobHash(key, hash) {
      const blob = blobs.get(key);
      if (!blob) return;
      if (hashTaken(hash, key)) throw new Error(`blob hash ${hash} already exists`);
      blob.hash = hash;
    },
    async findBlobByHash(hash) {
      for (const b of blobs.values()) if (b.hash === hash) return { ...b };
      return null;
    },

    async getAsset(accountId, id, now) {
      const a = assets.get(id);
      return a && a.account_id === accountId && isLive(a, now) ? view(a) : null;
    },
    async findAssetByPath(accountId, filePath, now) {
      const found = [...assets.values()]
        .filter((a) => a.account_id === accountId && a.file_path === filePath && isLive(a, now))
        .sort((x, y) => y.created_at - x.created_at || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0));
      return found.length > 0 ? view(found[0]) : null;
    },
    async listAssetsByHash(accountId, hash, now) {
      return [...assets.values()]
        .filter((a) => a.account_id === accountId && isLive(a, now) && blobs.get(a.blob_key)?.hash === hash)
        .sort((x, y) => y.created_at - x.created_at || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0))
        .map(view);
    },
    async deleteAsset(accountId, id, now) {
      const a = assets.get(id);
      if (!a || a.account_id !== accountId || !isLive(a, now)) return false;
      return assets.delete(id);
    },

    async deleteExpiredAssets(now, limit) {
      const expired = [...assets.values()]
        .filter((a) => a.expires_at !== null && a.expires_at <= now)
        .sort((x, y) => x.expires_at! - y.expires_at!)
        .slice(0, limit);
      for (const a of expired) assets.delete(a.id);
      return expired.map((a) => a.blob_key);
    },
    async listUnreferencedBlobs(limit) {
      const referenced = new Set([...assets.values()].map((a) => a.blob_key));
      return [...blobs.values()]
        .filter((b) => !referenced.has(b.key))
        .sort((x, y) => x.created_at - y.created_at)
        .slice(0, limit)
        .map((b) => b.key);
    },
    async blockBlob(key, _reason, _now) {
      blocked.add(key);
      const ids = [...assets.values()].filter((a) => a.blob_key === key).map((a) => a.id);
      for (const id of ids) assets.delete(id);
      return ids;
    },
    async isBlobBlocked(key) {
      return blocked.has(key);
    },

    async deleteBlobIfUnreferenced(key) {
      for (const a of assets.values()) if (a.blob_key === key) return false;
      return blobs.delete(key);
    },

    async close() {},
  };
}
