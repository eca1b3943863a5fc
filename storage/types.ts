// The storage the core depends on: a metadata store (records, transactions)
// and a blob store (content-addressed bytes). The metadata store is composed
// of small interfaces, one per concern (storage/interfaces/*), so a backend is
// written and tested a piece at a time; the core imports only these types.
import type { AccountStore } from './interfaces/account-store.ts';
import type { AssetStore } from './interfaces/asset-store.ts';
import type { BlobLockStore } from './interfaces/blob-lock-store.ts';
import type { BlobStore } from './interfaces/blob-store.ts';
import type { EngineServerStore } from './interfaces/engine-server-store.ts';
import type { EventBus } from './interfaces/event-bus.ts';
import type { IdempotencyStore } from './interfaces/idempotency-store.ts';
import type { JobStore } from './interfaces/job-store.ts';
import type { StoreLifecycle } from './interfaces/lifecycle.ts';
import type { SettingsStore } from './interfaces/settings-store.ts';
import type { VideoTaskStore } from './interfaces/video-task-store.ts';
import type { WebhookOutboxStore } from './interfaces/webhook-outbox-store.ts';
import type { WorkerSlotStore } from './interfaces/worker-slot-store.ts';

export type { AccountRecord, AccountStore } from './interfaces/account-store.ts';
export {
  type AssetRecord,
  type AssetStore,
  type BlobRecord,
  type CommitAssetResult,
  commitOrder,
  type LeaseFence,
  LeaseLostError,
  type NewAsset,
} from './interfaces/asset-store.ts';
export type { BlobLockStore } from './interfaces/blob-lock-store.ts';
export type { BlobStore, BlobWriter, ByteRange, SignedUrlOptions } from './interfaces/blob-store.ts';
export {
  type EngineServerRecord,
  type EngineServerState,
  type EngineServerStore,
  type NewEngineServer,
  normalizeServerUrl,
} from './interfaces/engine-server-store.ts';
export type { EventBus } from './interfaces/event-bus.ts';
export type { IdempotencyStore } from './interfaces/idempotency-store.ts';
export {
  type AccountJobFilter,
  type AccountJobQuery,
  type BoundedJob,
  type ClaimedJob,
  FRESH_JOB,
  type JobClaim,
  type JobGuard,
  type JobLease,
  type JobPatch,
  type JobRecord,
  type JobStamp,
  type JobStore,
  type JobSummary,
  type JobTierCount,
  type JobWorkflow,
  type NewJob,
  type QueueBounds,
  type QueueRefusal,
} from './interfaces/job-store.ts';
export { RunnerLockError, type StoreLifecycle } from './interfaces/lifecycle.ts';
export type { SettingsStore } from './interfaces/settings-store.ts';
export type { VideoTaskPatch, VideoTaskRecord, VideoTaskStore } from './interfaces/video-task-store.ts';
export type {
  NewWebhookDelivery,
  WebhookClaim,
  WebhookDelivery,
  WebhookDeliveryState,
  WebhookOutboxStore,
  WebhookSettlement,
} from './interfaces/webhook-outbox-store.ts';
export type { WorkerSlotClaim, WorkerSlotKey, WorkerSlotStore } from './interfaces/worker-slot-store.ts';

/** Every metadata concern in one object: what `createService` is given. */
export interface MetadataStore
  extends StoreLifecycle,
    SettingsStore,
    AccountStore,
    IdempotencyStore,
    AssetStore,
    JobStore,
    VideoTaskStore,
    WebhookOutboxStore {
  /** Engine-server slots claimed across processes: what the worker engine's `slots` option takes. Optional for other backends. */
  workerSlots?: WorkerSlotStore;
  /** Engine servers registered at run time (the operator's /ops/servers); absent: the routes that change them answer 409. */
  engineServers?: EngineServerStore;
  /** Blob keys locked across the processes sharing the storage; absent where one process uses it (its own mutex is enough). */
  blobLocks?: BlobLockStore;
  /**
   * A value that differs from every earlier one once anything has been
   * committed to the store since, by this instance or any other sharing it;
   * undefined when it cannot tell right now. Synchronous and much cheaper
   * than a read of a row: while it has not moved, what was read before it
   * still holds (a kept job view need not read its stamp again). Absent
   * where the store has no such thing (PostgreSQL, memory).
   */
  commitMark?(): string | undefined;
}

/** What `createService` takes: both halves (and the bus, when instances share the storage), and who closes them. */
export interface Storage {
  metadata: MetadataStore;
  blobs: BlobStore;
  /** Live job events between the instances on this storage; absent where one process owns it (its hub then stays in process). */
  events?: EventBus;
}
