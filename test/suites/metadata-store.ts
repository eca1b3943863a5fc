// The whole MetadataStore conformance: every per-interface suite, each test
// on a fresh store from `make`. A backend's test file is this one call; a
// backend built a piece at a time runs the suites of its pieces on their own.
import { describe } from 'vitest';
import type { MetadataStore } from '../../storage/types.ts';
import { accountStoreSuite } from './account-store.ts';
import { assetStoreSuite } from './asset-store.ts';
import { engineServerStoreSuite } from './engine-server-store.ts';
import { idempotencyStoreSuite } from './idempotency-store.ts';
import { jobQueueCountSuite } from './job-queue-counts.ts';
import { jobStampSuite } from './job-stamp.ts';
import { jobStoreSuite } from './job-store.ts';
import { jobTierCountSuite } from './job-store-tier-counts.ts';
import { lifecycleSuite } from './lifecycle.ts';
import { settingsStoreSuite } from './settings-store.ts';
import type { MakeStore } from './store-fixtures.ts';
import { videoTaskStoreSuite } from './video-task-store.ts';
import { webhookOutboxStoreSuite } from './webhook-outbox-store.ts';

export type { MakeStore, StoreFixture } from './store-fixtures.ts';

export function metadataStoreSuite(name: string, make: MakeStore<MetadataStore>): void {
  describe(`MetadataStore conformance: ${name}`, () => {
    lifecycleSuite(make);
    settingsStoreSuite(make);
    accountStoreSuite(make);
    idempotencyStoreSuite(make);
    assetStoreSuite(make);
    jobStoreSuite(make);
    jobStampSuite(make);
    jobQueueCountSuite(make);
    jobTierCountSuite(make);
    videoTaskStoreSuite(make);
    webhookOutboxStoreSuite(make);
    engineServerStoreSuite(make);
  });
}
