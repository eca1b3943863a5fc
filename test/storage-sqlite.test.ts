// The SQLite metadata store against every metadata conformance suite: a real
// database file per test, in one temp directory per test file.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { metadataStoreSuite } from './suites/metadata-store.ts';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-sqlite-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

metadataStoreSuite('sqlite', async () => {
  const storage = await createSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore() });
  return { store: storage.metadata, cleanup: () => storage.close() };
});

describe('sqlite storage specifics', () => {
  it('uses an injected driver and sets the pragmas on it', async () => {
    const database = new BetterSqlite3(join(dir, 'injected.sqlite'));
    const storage = await createSqliteStorage({ filename: 'ignored', blobs: createMemoryBlobStore(), database });
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(database.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(database.pragma('busy_timeout', { simple: true })).toBe(5000);
    await storage.close();
    await storage.close(); // idempotent, as createService may close the halves too
    expect(database.open).toBe(false);
  });

  it('keeps data across reopening the file', async () => {
    const filename = join(dir, 'reopened.sqlite');
    const first = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
    await first.metadata.initSetting('k', 'v');
    await first.close();
    const second = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
    expect(await second.metadata.getSetting('k')).toBe('v');
    await second.close();
  });
});
