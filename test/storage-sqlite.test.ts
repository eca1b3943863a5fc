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

  it('selects the workflow column only in listJobWorkflows, never in the listings, the queue reads or the sweep', async () => {
    const database = new BetterSqlite3(join(dir, 'statements.sqlite'));
    const prepared: string[] = [];
    const recording = {
      prepare(sql: string) {
        prepared.push(sql);
        return database.prepare(sql);
      },
      exec: (sql: string) => database.exec(sql),
      close: () => database.close(),
    };
    const storage = await createSqliteStorage({ filename: 'ignored', blobs: createMemoryBlobStore(), database: recording });
    const store = storage.metadata;
    const workflow = { '1': { class_type: 'Show', inputs: { value: 1 } } };
    for (const id of ['a', 'b', 'c']) await store.createJob({ id, account_id: 'acc', status: 'queued', workflow, created_at: 1, expires_at: 2 });
    await store.transitionJob('b', 'queued', 'running', { started_at: 1 });
    await store.transitionJob('c', 'queued', 'canceled', { completed_at: 1 });
    const all = ['queued', 'running', 'canceled'];
    await store.getJob('acc', 'a');
    await store.getJobById('b');
    await store.listJobsByStatus(all, 10);
    await store.listQueuedJobs('acc', 10);
    await store.listAccountsWithQueuedJobs(10);
    await store.listAccountJobs('acc', { statuses: all, limit: 10 });
    await store.listAccountJobs('acc', { statuses: all, sort: 'execution_time', output_type: 'image', expires_after: 0, limit: 10 });
    await store.countAccountJobs('acc', { statuses: all });
    await store.countQueuedBefore(10);
    await store.expireJobs(all, 5, 10);
    const jobReads = () => prepared.filter((sql) => /^\s*select\b.*"jobs"/i.test(sql));
    /** Reads of jobs' rows whole or of their workflow. */
    const workflowReads = () => jobReads().filter((sql) => /select \*|"jobs"\.\*|"workflow"/i.test(sql));
    expect(jobReads().length).toBeGreaterThanOrEqual(8);
    expect(workflowReads()).toEqual([]);
    expect(await store.listJobWorkflows('acc', ['a', 'b'])).toEqual([
      { id: 'a', workflow },
      { id: 'b', workflow },
    ]);
    expect(workflowReads()).toHaveLength(1);
    await storage.close();
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
