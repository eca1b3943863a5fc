// The in-process MetadataStore: one small store per concern, composed. For
// tests, examples and single-process use without persistence.
import type { MetadataStore } from '../types.ts';
import { createMemoryAccountStore } from './account-store.ts';
import { createMemoryAssetStore, createMemoryAssetTables } from './asset-store.ts';
import { createMemoryEngineServerStore } from './engine-server-store.ts';
import { createMemoryIdempotencyStore } from './idempotency-store.ts';
import { createMemoryJobStore } from './job-store.ts';
import { createMemorySettingsStore } from './settings-store.ts';
import { createMemoryVideoTaskStore } from './video-task-store.ts';
import { createMemoryWebhookOutboxStore } from './webhook-outbox-store.ts';
import { createMemoryWorkerSlotStore } from './worker-slot-store.ts';

export function createMemoryMetadataStore(): MetadataStore {
  // Shared with the job store, whose listings filter jobs by their outputs.
  const assetTables = createMemoryAssetTables();
  const { tierOf, ...accountStore } = createMemoryAccountStore();
  const { holdsLease, ...jobStore } = createMemoryJobStore(
    () => assetTables.assets.values(),
    tierOf,
    (id) => assetTables.viewVersions.get(id) ?? 0,
  );
  const { add: addDeliveries, ...outboxStore } = createMemoryWebhookOutboxStore();
  const videoTaskStore = createMemoryVideoTaskStore();
  let closed = false;
  return {
    // Maps need no schema and hold no connection.
    async migrate() {},
    async close() {
      closed = true;
    },
    // Answers as a database would: until it is closed.
    async ping() {
      if (closed) throw new Error('the memory store is closed');
    },
    ...createMemorySettingsStore(),
    ...accountStore,
    ...createMemoryIdempotencyStore(),
    // Job outputs are fenced by the job's lease (AssetStore.commitAsset).
    ...createMemoryAssetStore(assetTables, holdsLease),
    ...jobStore,
    ...videoTaskStore,
    ...outboxStore,
    // A move's deliveries are added once it happened (what SQL does in one transaction: memory has no crash between).
    async transitionJob(id, from, to, { outbox, ...patch } = {}, guard) {
      const moved = await jobStore.transitionJob(id, from, to, patch, guard);
      if (moved && outbox) addDeliveries(outbox);
      return moved;
    },
    async transitionVideoTask(id, from, to, { outbox, ...patch }) {
      const moved = await videoTaskStore.transitionVideoTask(id, from, to, patch);
      if (moved && outbox) addDeliveries(outbox);
      return moved;
    },
    workerSlots: createMemoryWorkerSlotStore(),
    engineServers: createMemoryEngineServerStore(),
  };
}
