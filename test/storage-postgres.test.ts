// The PostgreSQL metadata store against every metadata conformance suite, on a
// real server started for this file (test/helpers/postgres.ts), a database
// of its own per test (and again with a schema of its own per test); then
// what is PostgreSQL's own: an injected pool, int8 columns past 32 bits, two
// instances on one database, a database an earlier version migrated.
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { migrations } from '../storage/sql/migrations.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { NewJob } from '../storage/types.ts';
import { usePostgres } from './helpers/postgres.ts';
import { metadataStoreSuite } from './suites/metadata-store.ts';
import { workerSlotStoreSuite } from './suites/worker-slot-store.ts';

const server = usePostgres();

metadataStoreSuite('postgres', async () => {
  const storage = await createPostgresStorage({ connectionString: await server.newDatabase(), blobs: createMemoryBlobStore() });
  return { store: storage.metadata, cleanup: () => storage.close() };
});

workerSlotStoreSuite('postgres', async () => {
  const storage = await createPostgresStorage({ connectionString: await server.newDatabase(), blobs: createMemoryBlobStore() });
  return { store: storage.metadata.workerSlots!, cleanup: () => storage.close() };
});

// The same suites with every store in a schema of its own, all in one
// database: the `schema` option's tables, indexes and migration bookkeeping
// stay inside it, so stores side by side see nothing of each other.
let shared: string | undefined;
let schemas = 0;
metadataStoreSuite('postgres, a schema per store', async () => {
  shared ??= await server.newDatabase();
  const storage = await createPostgresStorage({ connectionString: shared, schema: `graphrun_${++schemas}`, blobs: createMemoryBlobStore() });
  return { store: storage.metadata, cleanup: () => storage.close() };
});

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const s of opened.splice(0).reverse()) await s.close();
});
/** A storage on the database, closed after the test. */
const open = async (connectionString: string, schema?: string) => {
  const storage = await createPostgresStorage({ connectionString, schema, blobs: createMemoryBlobStore() });
  opened.push(storage);
  return storage;
};
/** A pg client on the database for looking behind the store; ended after the test. */
const inspect = async (connectionString: string) => {
  const client = new pg.Client({ connectionString });
  await client.connect();
  opened.push({ close: () => client.end() });
  return client;
};
const newJob = (id: string, over: Partial<NewJob> = {}): NewJob => ({
  id,
  account_id: 'acc',
  status: 'queued',
  workflow: {},
  created_at: 1,
  expires_at: 2,
  ...over,
});

describe('postgres storage specifics', () => {
  it('uses an injected pool, leaves pg.types alone, and ends the pool on close (once, however often closed)', async () => {
    const pool = new pg.Pool({ connectionString: await server.newDatabase() });
    const storage = await createPostgresStorage({ pool, blobs: createMemoryBlobStore() });
    expect(await storage.metadata.initSetting('k', 'v')).toBe('v');
    // int8 (type 20) still parses as pg's default, a string: the store converts what it reads.
    expect(pg.types.getTypeParser(20)('12')).toBe('12');
    await storage.close();
    await storage.close();
    expect(pool.ended).toBe(true);
  });

  it('asks for a pool or a connection string', async () => {
    await expect(createPostgresStorage({ blobs: createMemoryBlobStore() })).rejects.toThrow(/pool.*connectionString/);
  });

  it('keeps epoch milliseconds, sizes and counters in bigint columns (int4 would overflow), flags and small counts in integer ones', async () => {
    const url = await server.newDatabase();
    const storage = await open(url);
    const client = await inspect(url);
    // Every migration SQLite runs, by the same names.
    const applied = await client.query<{ name: string }>('select name from kysely_migration order by name');
    expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
    const { rows } = await client.query<{ column: string; type: string }>(
      `select table_name || '.' || column_name as column, data_type as type from information_schema.columns
       where table_schema = 'public' and table_name not like 'kysely%' and data_type <> 'text' order by 1`,
    );
    const integers = ['jobs.attempts', 'jobs.outputs_reused', 'jobs.priority', 'webhook_deliveries.attempts', 'webhook_deliveries.seq'];
    expect(rows.filter((r) => r.type !== (integers.includes(r.column) ? 'integer' : 'bigint'))).toEqual([]);
    expect(rows.map((r) => r.column)).toEqual(expect.arrayContaining(['assets.created_at', 'blobs.size', 'jobs.seq', 'video_tasks.credits']));

    // Past 2^32, read back as numbers; the 0/1 flag as a boolean.
    const far = 2 ** 45;
    await storage.metadata.createJob(newJob('j', { created_at: far, expires_at: far + 1 }));
    await storage.metadata.transitionJob('j', 'queued', 'running', { started_at: far + 2, outputs_reused: true });
    expect(await storage.metadata.getJobById('j')).toMatchObject({ created_at: far, expires_at: far + 1, started_at: far + 2, outputs_reused: true });
  });

  it('two instances on one database: of racing compare-and-set moves exactly one wins, and seqs never repeat', async () => {
    const url = await server.newDatabase();
    const [a, b] = [await open(url), await open(url)];
    const made = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).metadata.createJob(newJob(`j${i}`))));
    expect(new Set(made.map((j) => j.seq)).size).toBe(10);
    const moves = await Promise.all([a, b, a, b].map((s) => s.metadata.transitionJob('j0', 'queued', 'running', { add_attempts: 1 })));
    expect(moves.filter(Boolean)).toHaveLength(1);
    expect(await b.metadata.getJobById('j0')).toMatchObject({ status: 'running', attempts: 1 });
  });

  it('a database migrated by an earlier version gains the later columns: its jobs read priority 0, no metadata, no run record', async () => {
    const url = await server.newDatabase();
    const old = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }) });
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0005'));
    const { error } = await new Migrator({ db: old, provider: { getMigrations: async () => before } }).migrateToLatest();
    expect(error).toBeUndefined();
    const row = { account_id: 'acc', status: 'succeeded', workflow: '{}', created_at: 1, expires_at: 2, attempts: 1 };
    await old
      .insertInto('jobs')
      .values({ ...row, id: 'old', seq: 1 })
      .execute();
    await old.insertInto('counters').values({ name: 'job_seq', value: 1 }).execute();
    await old.destroy();

    const store = (await open(url)).metadata;
    expect(await store.getJobById('old')).toMatchObject({
      seq: 1,
      priority: 0,
      metadata: null,
      outputs_reused: false,
      cached_nodes: null,
      temp_asset_ids: [],
    });
    expect((await store.createJob(newJob('new'))).seq).toBe(2);
  });
});
