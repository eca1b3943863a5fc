// The MetadataStore conformance suite, and the BlobStore one over inline blobs, on bun:sqlite, run by `bun test` (which
// serves the suite's vitest imports from its own runner). Started by
// test/runtime-sqlite.test.ts; not a vitest file itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryBlobStore } from '../../storage/memory/index.ts';
import { createBunSqliteStorage } from '../../storage/sql/bun-sqlite.ts';
import { blobStoreSuite } from '../suites/blob-store.ts';
import { metadataStoreSuite } from '../suites/metadata-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphrun-bun-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

metadataStoreSuite('bun:sqlite', async () => {
  const storage = await createBunSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore() });
  return { store: storage.metadata, cleanup: () => storage.close() };
});

// Inline blobs (storage/sql/inline-blobs.ts) bind and read bytes through this driver: 64 bytes sends the suite's blobs both ways.
blobStoreSuite('bun:sqlite inline (64 bytes) + memory', async () => {
  const storage = await createBunSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore(), inlineBlobBytes: 64 });
  return { store: storage.blobs, cleanup: () => storage.close() };
});
