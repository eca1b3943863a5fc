// The MetadataStore conformance suite, and the BlobStore one over inline blobs, on node:sqlite, run by vitest under Deno
// (test/runtime/vitest.deno.config.ts). Started by test/runtime-sqlite.test.ts;
// not part of the Node test run (Node 20 has no node:sqlite).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryBlobStore } from '../../storage/memory/index.ts';
import { createNodeSqliteStorage } from '../../storage/sql/node-sqlite.ts';
import { blobStoreSuite } from '../suites/blob-store.ts';
import { metadataStoreSuite } from '../suites/metadata-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphrun-node-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

metadataStoreSuite('node:sqlite', async () => {
  const storage = await createNodeSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore() });
  return { store: storage.metadata, cleanup: () => storage.close() };
});

// Inline blobs (storage/sql/inline-blobs.ts) bind and read bytes through this driver: 64 bytes sends the suite's blobs both ways.
blobStoreSuite('node:sqlite inline (64 bytes) + memory', async () => {
  const storage = await createNodeSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore(), inlineBlobBytes: 64 });
  return { store: storage.blobs, cleanup: () => storage.close() };
});
