// Kysely table types of the metadata schema (see migrations.ts). One schema
// for every dialect: times are epoch-ms integers, tags and job payloads are
// JSON text.
import type { ColumnType } from 'kysely';

/**
 * A 64-bit integer column. SQLite drivers return a number, PostgreSQL's `pg`
 * returns int8 as a string (or a bigint with some drivers), so reads go
 * through `toNumber` in the store; writes are always plain numbers.
 */
export type Int8 = ColumnType<number | string | bigint, number, number>;
export type NullableInt8 = ColumnType<number | string | bigint | null, number | null, number | null>;

export interface SettingsTable {
  key: string;
  value: string;
}

export interface AccountsTable {
  id: string;
  tier: string;
  created_at: Int8;
}

export interface ApiKeysTable {
  key_hash: string;
  account_id: string;
  created_at: Int8;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  created_at: Int8;
  expires_at: Int8;
}

export interface BlobsTable {
  key: string;
  hash: string | null;
  size: Int8;
  created_at: Int8;
}

export interface AssetsTable {
  id: string;
  account_id: string;
  blob_key: string;
  content_type: string;
  file_path: string | null;
  /** JSON array of strings. */
  tags: string;
  created_at: Int8;
  expires_at: NullableInt8;
  job_id: string | null;
  node_id: string | null;
  output_type: string | null;
}

/** SQLite only, made by inline-blobs.ts (no migration: PostgreSQL keeps every blob outside): small blobs' bytes. */
export interface InlineBlobsTable {
  key: string;
  bytes: Uint8Array;
  modified_at: Int8;
}

export interface BlockedBlobsTable {
  key: string;
  reason: string;
  created_at: Int8;
}

export interface JobsTable {
  id: string;
  account_id: string;
  status: string;
  /** JSON object: the API-format workflow. */
  workflow: string;
  /** Taken from `counters` (name `job_seq`) in the inserting transaction. */
  seq: Int8;
  created_at: Int8;
  started_at: NullableInt8;
  completed_at: NullableInt8;
  expires_at: Int8;
  /** JSON object or null. */
  progress: string | null;
  /** JSON object (a JobError) or null. */
  error: string | null;
  attempts: number;
  /** Higher first within the account's queue; defaults to 0. */
  priority: ColumnType<number, number | undefined, number>;
  /** JSON object (the caller's metadata) or null. */
  metadata: string | null;
  /** 0 or 1 (a boolean both dialects store alike); defaults to 0. */
  outputs_reused: ColumnType<number, number | undefined, number>;
  /** Set when the account took the job out of its history (POST /history). */
  history_hidden_at: NullableInt8;
  /** JSON array of node ids, or null: written when a run ends. */
  cached_nodes: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of asset ids, or null (none): written when a run ends. */
  temp_asset_ids: ColumnType<string | null, string | null | undefined, string | null>;
  /** Bumped by every change of the job's outputs (JobStore.getJobStamp); defaults to 0. */
  view_version: ColumnType<string | number | bigint, number | undefined, number>;
  /** The runner holding the job, or null. */
  lease_owner: ColumnType<string | null, string | null | undefined, string | null>;
  lease_expires_at: ColumnType<string | number | bigint | null, number | null | undefined, number | null>;
  /** Fencing token: grows with every claim and release; defaults to 0. */
  lease_token: ColumnType<string | number | bigint, number | undefined, number>;
}

export interface VideoTasksTable {
  id: string;
  account_id: string;
  state: string;
  /** JSON object: the validated request fields. */
  request: string;
  credits: Int8;
  provider: string;
  provider_task_id: string | null;
  link_base: string;
  output_asset_id: string | null;
  /** JSON object (the error body) or null. */
  error: string | null;
  created_at: Int8;
  updated_at: Int8;
  expires_at: Int8;
}

/** Named monotonic counters (see storage/sql/job-store.ts for why not a sequence). */
export interface CountersTable {
  name: string;
  value: Int8;
}

/** A bus message too large for a NOTIFY, fetched by id by the instances it was sent to. */
export interface EventPayloadsTable {
  id: string;
  payload: string;
  created_at: Int8;
}

/** A worker slot a process holds while its prompt runs there (worker-slot-store.ts). */
export interface WorkerSlotsTable {
  worker: string;
  job_id: string;
  owner: string;
  expires_at: Int8;
}

/** An engine server registered at run time (engine-server-store.ts). */
export interface EngineServersTable {
  id: string;
  deployment: string;
  url: string;
  state: string;
  created_at: Int8;
  updated_at: Int8;
}

/** A delivery of the outbox (webhook-outbox-store.ts). */
export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  kind: string;
  endpoint: string;
  event_type: string;
  subject: string;
  seq: number;
  payload: string | null;
  state: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Int8;
  claimed_by: string | null;
  claimed_until: NullableInt8;
  last_error: string | null;
  created_at: Int8;
  ended_at: NullableInt8;
}

/** Each account's queued jobs (storage/sql/queue-counts.ts); a row may stay at 0. */
export interface QueueCountsTable {
  account_id: string;
  queued: Int8;
}

export interface Database {
  engine_servers: EngineServersTable;
  queue_counts: QueueCountsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  event_payloads: EventPayloadsTable;
  worker_slots: WorkerSlotsTable;
  blocked_blobs: BlockedBlobsTable;
  inline_blobs: InlineBlobsTable;
  jobs: JobsTable;
  counters: CountersTable;
  settings: SettingsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  blobs: BlobsTable;
  assets: AssetsTable;
  video_tasks: VideoTasksTable;
}

/** Epoch ms and sizes stay far below 2^53, so Number() is exact. */
export function toNumber(value: number | string | bigint): number {
  return typeof value === 'number' ? value : Number(value);
}
