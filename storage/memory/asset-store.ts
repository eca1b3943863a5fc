// In-process AssetStore: blob rows, asset rows and blocked keys in maps.
// Mirrors the SQL store's semantics (unique blob hash, live = no expiry or
// expiry after `now`, a failed commit leaves nothing) so both pass the same
// conformance suite. The tables are passed in because the job store reads
// the asset rows too (jobs filtered by their outputs' kind).
import {
  type AssetRecord,
  type AssetStore,
  type BlobRecord,
  type CommitAssetResult,
  commitOrder,
  type LeaseFence,
  LeaseLostError,
  type NewAsset,
} from '../types.ts';

export interface MemoryAssetTables {
  blobs: Map<string, BlobRecord>;
  assets: Map<string, NewAsset>;
  blocked: Set<string>;
  /** Jobs' view versions (JobStore.getJobStamp), bumped here as their outputs change; absent: 0. */
  viewVersions: Map<string, number>;
}

export const createMemoryAssetTables = (): MemoryAssetTables => ({
  blobs: new Map(),
  assets: new Map(),
  blocked: new Set(),
  viewVersions: new Map(),
});

const isLive = (a: { expires_at: number | null }, now: number) => a.expires_at === null || a.expires_at > now;
/** Newest first, then the larger id: the order of the SQL store's `created_at desc, id desc`. */
const newestFirst = (x: NewAsset, y: NewAsset) => commitOrder(y, x);

/**
 * `holdsLease`: whether a job's lease token is still the given one while it
 * runs (the job store's, where they are composed); a fenced commit checks it
 * with no await before writing, which on one event loop is one step.
 */
export function createMemoryAssetStore(
  { blobs, assets, blocked, viewVersions }: MemoryAssetTables = createMemoryAssetTables(),
  holdsLease: (fence: LeaseFence) => boolean = () => false,
): AssetStore {
  // Indexes over the tables, kept by this store (the only one that writes them), so a lookup by
  // hash, blob, job or file path costs the same with a million rows as with ten, as the SQL store's do.
  const keyByHash = new Map<string, string>();
  const byBlob = new Map<string, Set<string>>();
  const byJob = new Map<string, Set<string>>();
  const byPath = new Map<string, Set<string>>();
  /** A file path is the account's own: the key holds both. */
  const pathKey = (accountId: string, filePath: string) => `${accountId}\n${filePath}`;
  /** Adds the row to (or drops it from) every index of assets. */
  const indexAsset = (a: NewAsset, update: (index: Map<string, Set<string>>, key: string, id: string) => void) => {
    update(byBlob, a.blob_key, a.id);
    if (a.job_id !== null) update(byJob, a.job_id, a.id);
    if (typeof a.file_path === 'string') update(byPath, pathKey(a.account_id, a.file_path), a.id);
  };
  const addTo = (index: Map<string, Set<string>>, key: string, id: string) => {
    const ids = index.get(key);
    if (ids) ids.add(id);
    else index.set(key, new Set([id]));
  };
  const dropFrom = (index: Map<string, Set<string>>, key: string, id: string) => {
    const ids = index.get(key);
    if (ids?.delete(id) && ids.size === 0) index.delete(key);
  };
  // Rows already in tables given from outside.
  for (const b of blobs.values()) if (b.hash !== null) keyByHash.set(b.hash, b.key);
  for (const a of assets.values()) indexAsset(a, addTo);
  const rows = (ids: Set<string> | undefined): NewAsset[] => (ids ? [...ids].map((id) => assets.get(id)!) : []);

  /** Removes the asset row; its job's view changed. */
  const remove = (a: NewAsset) => {
    assets.delete(a.id);
    indexAsset(a, dropFrom);
    bump(a.job_id);
  };
  const bump = (jobId: string | null) => {
    if (jobId !== null) viewVersions.set(jobId, (viewVersions.get(jobId) ?? 0) + 1);
  };
  // Copies out, so callers can never mutate the stored records.
  const view = (a: NewAsset): AssetRecord => {
    const blob = blobs.get(a.blob_key)!;
    return { ...a, node_id: a.node_id ?? null, output_type: a.output_type ?? null, tags: [...a.tags], hash: blob.hash, size_bytes: blob.size };
  };
  const hashTaken = (hash: string | null, key: string) => hash !== null && (keyByHash.get(hash) ?? key) !== key;

  return {
    async commitAsset(blob, asset, fence): Promise<CommitAssetResult> {
      // Check every constraint before writing anything: the SQL store rolls
      // back a failed commit, so a failure here must leave no trace either.
      if (fence && !holdsLease(fence)) throw new LeaseLostError(`job ${fence.job_id}: its lease moved on; the output is not stored`);
      if (assets.has(asset.id)) throw new Error(`asset ${asset.id} already exists`);
      const blobCreated = !blobs.has(blob.key);
      if (blobCreated && hashTaken(blob.hash, blob.key)) throw new Error(`blob hash ${blob.hash} already exists`);
      if (blobCreated) {
        blobs.set(blob.key, { ...blob, created_at: Date.now() });
        if (blob.hash !== null) keyByHash.set(blob.hash, blob.key);
      }
      assets.set(asset.id, { ...asset, node_id: asset.node_id ?? null, output_type: asset.output_type ?? null, tags: [...asset.tags] });
      indexAsset(assets.get(asset.id)!, addTo);
      bump(asset.job_id);
      return { asset: view(assets.get(asset.id)!), blob_created: blobCreated };
    },
    async setBlobHash(key, hash) {
      const blob = blobs.get(key);
      if (!blob) return;
      if (hashTaken(hash, key)) throw new Error(`blob hash ${hash} already exists`);
      if (blob.hash !== null && keyByHash.get(blob.hash) === key) keyByHash.delete(blob.hash);
      blob.hash = hash;
      if (hash !== null) keyByHash.set(hash, key);
    },
    async findBlobByHash(hash) {
      const key = keyByHash.get(hash);
      return key === undefined ? null : { ...blobs.get(key)! };
    },

    async getAsset(accountId, id, now) {
      const a = assets.get(id);
      return a && a.account_id === accountId && isLive(a, now) ? view(a) : null;
    },
    async findAssetByPath(accountId, filePath, now) {
      const found = rows(byPath.get(pathKey(accountId, filePath)))
        .filter((a) => isLive(a, now))
        .sort(newestFirst);
      return found.length > 0 ? view(found[0]) : null;
    },
    async listAssetsByHash(accountId, hash, now) {
      const key = keyByHash.get(hash);
      return rows(key === undefined ? undefined : byBlob.get(key))
        .filter((a) => a.account_id === accountId && isLive(a, now))
        .sort(newestFirst)
        .map(view);
    },
    async listJobAssets(accountId, jobId) {
      return rows(byJob.get(jobId))
        .filter((a) => a.account_id === accountId)
        .sort(commitOrder)
        .map(view);
    },
    async deleteAsset(accountId, id, now) {
      const a = assets.get(id);
      if (!a || a.account_id !== accountId || !isLive(a, now)) return false;
      remove(a);
      return true;
    },

    async blockBlob(key, _reason, _now) {
      blocked.add(key);
      const over = rows(byBlob.get(key));
      for (const a of over) remove(a);
      return over.map((a) => a.id);
    },
    async isBlobBlocked(key) {
      return blocked.has(key);
    },

    async deleteExpiredAssets(now, limit) {
      const expired = [...assets.values()]
        .filter((a) => a.expires_at !== null && a.expires_at <= now)
        .sort((x, y) => x.expires_at! - y.expires_at!)
        .slice(0, limit);
      for (const a of expired) remove(a);
      return expired.map((a) => a.blob_key);
    },
    async listUnreferencedBlobs(limit) {
      return [...blobs.values()]
        .filter((b) => !byBlob.has(b.key))
        .sort((x, y) => x.created_at - y.created_at)
        .slice(0, limit)
        .map((b) => b.key);
    },
    async deleteBlobIfUnreferenced(key) {
      if (byBlob.has(key)) return false;
      const blob = blobs.get(key);
      if (blob?.hash != null && keyByHash.get(blob.hash) === key) keyByHash.delete(blob.hash);
      return blobs.delete(key);
    },
    async knownBlobKeys(keys) {
      return keys.filter((key) => blobs.has(key));
    },
  };
}
