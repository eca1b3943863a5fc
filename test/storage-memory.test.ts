// The in-memory metadata store against every metadata conformance suite.
import { createMemoryStorage } from '../storage/memory/index.ts';
import { metadataStoreSuite } from './suites/metadata-store.ts';

metadataStoreSuite('memory', async () => {
  const { metadata } = createMemoryStorage();
  return { store: metadata, cleanup: () => metadata.close() };
});
