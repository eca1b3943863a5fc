// The MetadataStore conformance suite on bun:sqlite, run by `bun test` (which
// serves the suite's vitest imports from its own runner). Started by
// test/runtime-sqlite.test.ts; not a vitest file itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryBlobStore } from '../../storage/memory/index.ts';
import { createBunSqliteStorage } from '../../storage/sql/bun-sqlite.ts';
import { metadataStoreSuite } from '../suites/metadata-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphrun-bun-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

metadataStoreSuite('bun:sqlite', async () => {
  const storage = await createBunSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore() });
  return { store: storage.metadata, cleanup: () => storage.close() };
});
