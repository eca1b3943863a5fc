// The in-memory blob store against the shared conformance suite.
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { blobStoreSuite } from './suites/blob-store.ts';

blobStoreSuite('memory', async () => ({ store: createMemoryBlobStore(), cleanup: async () => {} }));
