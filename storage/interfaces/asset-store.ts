// Asset records and the blob rows under them. Blob rows are the metadata of
// content-addressed bytes (the bytes themselves are in the BlobStore); an
// asset is one account's record over a blob. One interface for both, because
// every write touches both in one transaction (commit, block, sweep).

/**
 * A stored blob. `key` addresses the bytes in the blob store; `hash` is the
 * server-computed `blake3:<hex>` once known (null while computed lazily).
 */
export interface BlobRecord {
  key: string;
  hash: string | null;
  size: number;
  created_at: number;
}

/** An asset row as stored. Times are epoch milliseconds. */
export interface AssetRecord {
  id: string;
  account_id: string;
  blob_key: string;
  /** Copied from the blob; null while the blob's hash is not known yet. */
  hash: string | null;
  size_bytes: number;
  content_type: string;
  file_path: string | null;
  tags: string[];
  created_at: number;
  expires_at: number | null;
  job_id: string | null;
  /** For a job output: the node that produced it. */
  node_id: string | null;
  /** For a job output: its kind (image, video, audio, text, file, latent). */
  output_type: string | null;
}

export interface NewAsset extends Omit<AssetRecord, 'hash' | 'size_bytes' | 'node_id' | 'output_type'> {
  node_id?: string | null;
  output_type?: string | null;
}

export interface CommitAssetResult {
  asset: AssetRecord;
  /** True when this call inserted the blob row (bytes new to the service). */
  blob_created: boolean;
}

/**
 * A job output's fence: the asset is committed only while the job's lease
 * token is still this one and the job runs, checked in the commit's own
 * transaction (on PostgreSQL it locks the job's row, so a runner taking the
 * job back waits for the commit or the commit sees it taken). Otherwise the
 * commit throws LeaseLostError and stores nothing.
 */
export interface LeaseFence {
  job_id: string;
  lease_token: number;
}

/** The job's lease moved on (taken back, or the job ended) before a fenced write: nothing was written. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

export interface AssetStore {
  /**
   * In one transaction: inserts the blob row if absent, then the asset over it.
   * Callers serialise calls for the same blob key (core/assets/blob-locks.ts;
   * across processes with BlobLockStore, where the storage has one).
   */
  commitAsset(blob: Omit<BlobRecord, 'created_at'>, asset: NewAsset, fence?: LeaseFence): Promise<CommitAssetResult>;
  /**
   * Fills a lazily computed hash; assets over the blob see it at once. A hash
   * names one blob: one that another blob row has already is refused (rejects).
   */
  setBlobHash(key: string, hash: string): Promise<void>;
  findBlobByHash(hash: string): Promise<BlobRecord | null>;

  /** Live assets only: not deleted, not expired at `now`. */
  getAsset(accountId: string, id: string, now: number): Promise<AssetRecord | null>;
  /** The account's newest live asset with this `file_path`, or null. */
  findAssetByPath(accountId: string, filePath: string, now: number): Promise<AssetRecord | null>;
  /** The account's live assets over the blob with this hash, newest first. */
  listAssetsByHash(accountId: string, hash: string, now: number): Promise<AssetRecord[]>;
  /**
   * A job's output assets (the account's assets with this job_id), in commit
   * order (`commitOrder`). Here rather than in JobStore: it reads asset rows only (no job row),
   * and builds records the way every other asset read does.
   */
  listJobAssets(accountId: string, jobId: string): Promise<AssetRecord[]>;
  /** Deletes a live asset record; false when there was none to delete. */
  deleteAsset(accountId: string, id: string, now: number): Promise<boolean>;

  /**
   * Refuses the bytes under `key` from now on and deletes every asset over
   * them, of every account, in one transaction. Returns the deleted asset ids.
   */
  blockBlob(key: string, reason: string, now: number): Promise<string[]>;
  isBlobBlocked(key: string): Promise<boolean>;

  /** Removes assets whose `expires_at` is at or before `now`; returns their blob keys. */
  deleteExpiredAssets(now: number, limit: number): Promise<string[]>;
  /** Blob keys that no asset references any more. */
  listUnreferencedBlobs(limit: number): Promise<string[]>;
  /** Deletes the blob row only if still unreferenced; true when it was deleted. */
  deleteBlobIfUnreferenced(key: string): Promise<boolean>;
  /** Which of these blob keys have a blob row (what the blob store holds beyond them has none). */
  knownBlobKeys(keys: string[]): Promise<string[]>;
}

/** Commit order, as listJobAssets gives a job's outputs: `created_at`, then `id`. */
export const commitOrder = (x: { created_at: number; id: string }, y: { created_at: number; id: string }): number =>
  x.created_at - y.created_at || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
