// The two storage interfaces the core depends on: a metadata store (records,
// transactions) and a blob store (content-addressed bytes). Implementations
// live beside this file, one factory each; the core imports only these types.

/** An account owns assets; `tier` drives scheduling in later surfaces. */
export interface AccountRecord {
  id: string;
  tier: string;
  created_at: number;
}

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

export interface MetadataStore extends JobStore, VideoTaskStore {
  /** Creates or upgrades the schema. Safe to call on every start. */
  migrate(): Promise<void>;

  getSetting(key: string): Promise<string | null>;
  /** Sets `key` only if absent; returns the value that is stored afterwards. */
  initSetting(key: string, value: string): Promise<string>;

  upsertAccount(account: { id: string; tier?: string }): Promise<AccountRecord>;
  /**
   * Replaces every stored API key with this set (hashes only; the plaintext
   * never reaches storage). The configuration is the source of truth, so a
   * key removed from it stops working at the next start.
   */
  replaceApiKeys(keys: Array<{ account_id: string; key_hash: string }>): Promise<void>;
  findAccountByKeyHash(keyHash: string): Promise<AccountRecord | null>;

  /**
   * Claims an idempotency key for one account. Returns false when a live
   * (unexpired) claim exists already; an expired claim is replaced.
   */
  claimIdempotencyKey(accountId: string, key: string, now: number, expiresAt: number): Promise<boolean>;
  releaseIdempotencyKey(accountId: string, key: string): Promise<void>;

  /**
   * In one transaction: inserts the blob row if absent, then the asset over it.
   * Callers serialise calls for the same blob key (see core/keyed-mutex).
   */
  commitAsset(blob: Omit<BlobRecord, 'created_at'>, asset: NewAsset): Promise<CommitAssetResult>;
  /** Fills a lazily computed hash; assets over the blob see it at once. */
  setBlobHash(key: string, hash: string): Promise<void>;

  findBlobByHash(hash: string): Promise<BlobRecord | null>;
  /** Live assets only: not deleted, not expired at `now`. */
  getAsset(accountId: string, id: string, now: number): Promise<AssetRecord | null>;
  /** The account's newest live asset with this `file_path`, or null. */
  findAssetByPath(accountId: string, filePath: string, now: number): Promise<AssetRecord | null>;
  /** The account's live assets over the blob with this hash, newest first. */
  listAssetsByHash(accountId: string, hash: string, now: number): Promise<AssetRecord[]>;
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
  deleteExpiredIdempotencyKeys(now: number): Promise<number>;

  close(): Promise<void>;
}

/** A job row. Times are epoch ms; JSON columns hold what the API shows. */
export interface JobRecord {
  id: string;
  account_id: string;
  /** One of core/jobs/state-machine's JobStatus values. */
  status: string;
  /** The API-format workflow as submitted (never the extra_data). */
  workflow: Record<string, unknown>;
  /** Monotonic submission order; FIFO per account comes from it. */
  seq: number;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  /** Retention deadline; the job turns `expired` after it. */
  expires_at: number;
  /** Latest progress snapshot, or null. */
  progress: Record<string, unknown> | null;
  /** The JobError of a failed job, or null. */
  error: Record<string, unknown> | null;
  /** How many times execution was started (a restart re-runs a running job). */
  attempts: number;
}

export type NewJob = Omit<JobRecord, 'seq' | 'started_at' | 'completed_at' | 'progress' | 'error' | 'attempts'>;

export interface JobPatch {
  started_at?: number | null;
  completed_at?: number | null;
  progress?: Record<string, unknown> | null;
  error?: Record<string, unknown> | null;
  /** Adds this many to `attempts`. */
  add_attempts?: number;
}

/** Which of an account's jobs a listing takes. */
export interface AccountJobFilter {
  /** Only jobs in these statuses; an empty list matches none. */
  statuses: string[];
  /** Only jobs whose `expires_at` is later than this (retention not over). */
  expires_after?: number;
  /** Only jobs with at least one output asset of this `output_type`. */
  output_type?: string;
}

export interface AccountJobQuery extends AccountJobFilter {
  /**
   * `seq` (submission order, the default) or `execution_time`
   * (completed_at - started_at; jobs without both come last either way, then by seq).
   */
  sort?: 'seq' | 'execution_time';
  /** Default `desc`: newest (or longest) first. */
  order?: 'asc' | 'desc';
  limit: number;
  offset?: number;
}

/** Job persistence: every status change is a compare-and-set on the current status. */
export interface JobStore {
  /** Inserts a job (status as given, normally `queued`) and returns it with its `seq`. */
  createJob(job: NewJob): Promise<JobRecord>;
  /** The account's job, or null (another account's job is null too). */
  getJob(accountId: string, id: string): Promise<JobRecord | null>;
  /** Any account's job, for the scheduler. */
  getJobById(id: string): Promise<JobRecord | null>;
  /**
   * Moves the job from `from` to `to` only if it is still in `from`, applying
   * the patch in the same statement; false when another writer moved it first.
   */
  transitionJob(id: string, from: string, to: string, patch?: JobPatch): Promise<boolean>;
  /** Stores a progress snapshot unless the job has left `running`/`canceling`. */
  saveProgress(id: string, progress: Record<string, unknown>): Promise<void>;
  /** Jobs in one of these statuses, oldest `seq` first. */
  listJobsByStatus(statuses: string[], limit: number): Promise<JobRecord[]>;
  /** One account's jobs matching the filter, in the query's order, one page of them. */
  listAccountJobs(accountId: string, query: AccountJobQuery): Promise<JobRecord[]>;
  /** How many of the account's jobs match the filter (the total a page is out of). */
  countAccountJobs(accountId: string, filter: AccountJobFilter): Promise<number>;
  /** Queued jobs an account may start next, oldest first. */
  listQueuedJobs(accountId: string, limit: number): Promise<JobRecord[]>;
  /** Accounts that have queued jobs, each with the `seq` of its oldest queued job (fairness). */
  listAccountsWithQueuedJobs(limit: number): Promise<Array<{ account_id: string; oldest_seq: number }>>;
  countJobs(statuses: string[], accountId?: string): Promise<number>;
  /** Queued jobs submitted before this one (its 0-based place in the global queue). */
  countQueuedBefore(seq: number): Promise<number>;
  /** Terminal jobs whose `expires_at` passed: moved to `expired` (CAS); returns their ids. */
  expireJobs(terminalStatuses: string[], now: number, limit: number): Promise<string[]>;
  /** The job's output assets (assets with this job_id), in commit order. */
  listJobAssets(accountId: string, jobId: string): Promise<AssetRecord[]>;
}

/**
 * A multi-frame video task (POST /proxy/videogen/multiframe). Times are epoch
 * ms; `request` holds the validated request fields as the record shows them.
 */
export interface VideoTaskRecord {
  id: string;
  account_id: string;
  /** created, queueing, processing, success or failed (core/proxy/video/states.ts). */
  state: string;
  request: Record<string, unknown>;
  credits: number;
  /** The provider's name and its id for the task, once it has one. */
  provider: string;
  provider_task_id: string | null;
  /** Origin and mount prefix the links of the record start with (deliveries have no request). */
  link_base: string;
  output_asset_id: string | null;
  /** The error body of a failed task, or null. */
  error: Record<string, unknown> | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

export interface VideoTaskPatch {
  provider_task_id?: string | null;
  output_asset_id?: string | null;
  error?: Record<string, unknown> | null;
  updated_at: number;
}

/** Video task persistence: every state change is a compare-and-set on the current state. */
export interface VideoTaskStore {
  createVideoTask(task: VideoTaskRecord): Promise<void>;
  /** The account's task, or null (another account's task is null too). */
  getVideoTask(accountId: string, id: string): Promise<VideoTaskRecord | null>;
  /** Moves the task from `from` to `to` (they may be equal) only if it is still in `from`; false otherwise. */
  transitionVideoTask(id: string, from: string, to: string, patch: VideoTaskPatch): Promise<boolean>;
  /** Tasks in these states, oldest first (the ones a restart resumes). */
  listVideoTasksByState(states: string[], limit: number): Promise<VideoTaskRecord[]>;
  /** Deletes up to `limit` tasks whose retention ended at or before `now`; returns their ids. */
  deleteExpiredVideoTasks(now: number, limit: number): Promise<string[]>;
}

/** A byte range, both ends inclusive, as HTTP ranges are. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Bytes being written to a temporary object before their key is known. */
export interface BlobWriter {
  /**
   * Appends a chunk. The store copies or consumes the chunk before resolving,
   * so the caller may reuse it; a store may resolve before the bytes reach
   * durable storage (commit makes them durable) and should wait only to push
   * back when too much is pending. Errors surface on a later write or commit.
   */
  write(chunk: Uint8Array): Promise<void>;
  /**
   * Moves the temporary object to `key` if no object has that key yet,
   * otherwise drops it. Returns true when this call created the object.
   */
  commit(key: string): Promise<boolean>;
  /** Discards the temporary object; safe to call more than once. */
  abort(): Promise<void>;
}

export interface BlobStore {
  begin(): Promise<BlobWriter>;
  /** The object's bytes (or the range of them); null when there is no object. */
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  has(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  close?(): Promise<void>;
}

/** What `createService` takes: both halves, and who closes them. */
export interface Storage {
  metadata: MetadataStore;
  blobs: BlobStore;
}
