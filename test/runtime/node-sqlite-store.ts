// The MetadataStore conformance suite on node:sqlite, run by vitest under Deno
// (test/runtime/vitest.deno.config.ts). Started by test/runtime-sqlite.test.ts;
// not part of the Node test run (Node 20 has no node:sqlite).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryBlobStore } from '../../storage/memory/index.ts';
import { createNodeSqliteStorage } from '../../storage/sql/node-sqlite.ts';
import { metadataStoreSuite } from '../suites/metadata-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphrun-node-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

metadataStoreSuite('node:sqlite', async () => {
  const storage = await createNodeSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore() });
  return { store: storage.metadata, cleanup: () => storage.close() };
});
