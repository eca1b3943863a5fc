// The in-process MetadataStore: one small store per concern, composed. For
// tests, examples and single-process use without persistence.
import type { MetadataStore } from '../types.ts';
import { createMemoryAccountStore } from './account-store.ts';
import { createMemoryAssetStore, createMemoryAssetTables } from './asset-store.ts';
import { createMemoryIdempotencyStore } from './idempotency-store.ts';
import { createMemoryJobStore } from './job-store.ts';
import { createMemorySettingsStore } from './settings-store.ts';
import { createMemoryVideoTaskStore } from './video-task-store.ts';
import { createMemoryWorkerSlotStore } from './worker-slot-store.ts';

export function createMemoryMetadataStore(): MetadataStore {
  // Shared with the job store, whose listings filter jobs by their outputs.
  const assetTables = createMemoryAssetTables();
  const { holdsLease, ...jobStore } = createMemoryJobStore(() => assetTables.assets.values());
  return {
    // Maps need no schema and hold no connection.
    async migrate() {},
    async close() {},
    ...createMemorySettingsStore(),
    ...createMemoryAccountStore(),
    ...createMemoryIdempotencyStore(),
    // Job outputs are fenced by the job's lease (AssetStore.commitAsset).
    ...createMemoryAssetStore(assetTables, holdsLease),
    ...jobStore,
    ...createMemoryVideoTaskStore(),
    workerSlots: createMemoryWorkerSlotStore(),
  };
}
