// The in-memory metadata store against every metadata conformance suite, and
// its worker slots against theirs.
import { createMemoryStorage } from '../storage/memory/index.ts';
import { metadataStoreSuite } from './suites/metadata-store.ts';
import { workerSlotStoreSuite } from './suites/worker-slot-store.ts';

metadataStoreSuite('memory', async () => {
  const { metadata } = createMemoryStorage();
  return { store: metadata, cleanup: () => metadata.close() };
});

workerSlotStoreSuite('memory', async () => {
  const { metadata } = createMemoryStorage();
  return { store: metadata.workerSlots!, cleanup: () => metadata.close() };
});
