// The SQLite metadata store against every metadata conformance suite: a real
// database file per test, in one temp directory per test file.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { migrations } from '../storage/sql/migrations.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { planOf, recordingDatabase } from './helpers/recording-sqlite.ts';
import { metadataStoreSuite } from './suites/metadata-store.ts';
import { workerSlotStoreSuite } from './suites/worker-slot-store.ts';

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

workerSlotStoreSuite('sqlite', async () => {
  const storage = await createSqliteStorage({ filename: join(dir, `db-${++n}.sqlite`), blobs: createMemoryBlobStore() });
  return { store: storage.metadata.workerSlots!, cleanup: () => storage.close() };
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
    await store.listAccountJobs('acc', { statuses: all, limit: 10, before_seq: 3 });
    await store.listAccountJobs('acc', { statuses: all, sort: 'execution_time', output_type: 'image', expires_after: 0, limit: 10 });
    await store.countAccountJobs('acc', { statuses: all });
    await store.countQueuedBefore({ seq: 10, account_id: 'acc', priority: 0 });
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

  it('the queue pick, the newest-first listing and queue_position read along an index: no scan, no sort', async () => {
    const { db: database, runs } = recordingDatabase(join(dir, 'plans.sqlite'));
    // The reads of jobs, with their parameters, to ask SQLite for the plan of each afterwards.
    const jobReads = () => runs.filter(({ sql }) => /^\s*select\b.*"jobs"/i.test(sql));
    const storage = await createSqliteStorage({ filename: 'ignored', blobs: createMemoryBlobStore(), database });
    const store = storage.metadata;
    for (let i = 0; i < 30; i++) {
      await store.createJob({
        id: `j${i}`,
        account_id: `acc${i % 3}`,
        status: 'queued',
        workflow: {},
        created_at: 1,
        expires_at: 2,
        priority: i % 4,
      });
    }
    runs.length = 0;
    await store.listQueuedJobs('acc1', 5);
    await store.listAccountJobs('acc1', { statuses: ['queued', 'running'], limit: 21 });
    await store.listAccountJobs('acc1', { statuses: ['queued', 'succeeded', 'failed'], limit: 21, before_seq: 20 });
    await store.countQueuedBefore({ seq: 20, account_id: 'acc1', priority: 2 });
    const reads = jobReads();
    expect(reads).toHaveLength(5);
    for (const read of reads) expect(planOf(database, read), read.sql).toEqual([expect.stringMatching(/^SEARCH jobs USING (COVERING )?INDEX /)]);
    // The pick order is read from the partial index of queued jobs (migration 0016): listing the queue and the account's own place.
    const pickOrder = reads.filter(({ sql }) => /order by "priority" desc|"priority" >/.test(sql));
    expect(pickOrder).toHaveLength(2);
    for (const read of pickOrder) expect(planOf(database, read)[0], read.sql).toMatch(/ INDEX jobs_queued_pick_idx /);
    await storage.close();
  });

  it('a claim picks along the partial index of queued jobs, which holds queued jobs alone', async () => {
    const { db: database, runs } = recordingDatabase(join(dir, 'pick.sqlite'));
    const storage = await createSqliteStorage({ filename: 'ignored', blobs: createMemoryBlobStore(), database });
    const store = storage.metadata;
    for (let i = 0; i < 6; i++) {
      await store.createJob({ id: `q${i}`, account_id: 'acc', status: 'queued', workflow: {}, created_at: 1, expires_at: 2, priority: i % 2 });
    }
    const claimed = await store.claimJob({ account_id: 'acc', limit: 10, owner: 'o', now: 5, lease_ms: 1000, alone: false });
    // Priority first, then submission order: q1 is the first of the priority-1 jobs.
    expect(claimed?.id).toBe('q1');
    expect(await store.transitionJob('q1', 'running', 'succeeded', { completed_at: 6, lease: null })).not.toBeNull();
    // The claim: the UPDATE that picks its job in a subquery over `next`.
    const claims = runs.filter(({ sql }) => /^\s*update "jobs"[\s\S]*"next"/i.test(sql));
    expect(claims).toHaveLength(1);
    const plan = planOf(database, claims[0]);
    expect(plan).toContain('SEARCH next USING INDEX jobs_queued_pick_idx (account_id=?)');
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE|SCAN/);
    // The index's entries are the queued jobs: the claimed and the finished one left it.
    const indexed = database
      .prepare(`select id from jobs indexed by jobs_queued_pick_idx where account_id = 'acc' and status = 'queued'`)
      .pluck()
      .all();
    expect(indexed).toEqual(['q3', 'q5', 'q0', 'q2', 'q4']);
    await storage.close();
  });

  it('a database from before priorities gains them: its jobs read priority 0, no metadata, outputs not reused', async () => {
    const filename = join(dir, 'before-priorities.sqlite');
    const database = new BetterSqlite3(filename);
    const old = new Kysely<any>({ dialect: new SqliteDialect({ database }) });
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0005'));
    const { error } = await new Migrator({ db: old, provider: { getMigrations: async () => before } }).migrateToLatest();
    expect(error).toBeUndefined();
    const row = { account_id: 'acc', status: 'queued', workflow: '{}', created_at: 1, expires_at: 2, attempts: 0 };
    await old
      .insertInto('jobs')
      .values([
        { ...row, id: 'old1', seq: 1 },
        { ...row, id: 'old2', seq: 2 },
      ])
      .execute();
    await old.insertInto('counters').values({ name: 'job_seq', value: 2 }).execute();
    await old.destroy();

    const storage = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
    const store = storage.metadata;
    expect(await store.getJobById('old1')).toMatchObject({ seq: 1, priority: 0, metadata: null, outputs_reused: false });
    const urgent = await store.createJob({ id: 'new', account_id: 'acc', status: 'queued', workflow: {}, created_at: 3, expires_at: 4, priority: 1 });
    expect(urgent.seq).toBe(3);
    expect((await store.listQueuedJobs('acc', 10)).map((j) => j.id)).toEqual(['new', 'old1', 'old2']);
    await storage.close();
  });

  it("a database from before runs' records gains them: a job finished before reads no cached nodes and no temporary files", async () => {
    const filename = join(dir, 'before-run-records.sqlite');
    const database = new BetterSqlite3(filename);
    const old = new Kysely<any>({ dialect: new SqliteDialect({ database }) });
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0007'));
    const { error } = await new Migrator({ db: old, provider: { getMigrations: async () => before } }).migrateToLatest();
    expect(error).toBeUndefined();
    const row = { account_id: 'acc', workflow: '{}', created_at: 1, started_at: 2, completed_at: 3, expires_at: 4, attempts: 1 };
    await old
      .insertInto('jobs')
      .values({ ...row, id: 'old', status: 'succeeded', seq: 1 })
      .execute();
    await old.destroy();

    const storage = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
    expect(await storage.metadata.getJobById('old')).toMatchObject({ status: 'succeeded', cached_nodes: null, temp_asset_ids: [] });
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
