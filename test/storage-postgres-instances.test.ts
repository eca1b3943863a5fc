// What instances sharing one PostgreSQL database rely on the storage for,
// each case with two storages on the database as two processes have them:
// blob-key locks (the BlobLockStore suite, then their sessions and pools),
// idempotency claims and queue bounds that racing instances cannot both pass.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage, type PostgresStorageOptions } from '../storage/sql/postgres.ts';
import type { JobSummary, QueueRefusal } from '../storage/types.ts';
import { until } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';
import { blobLockStoreSuite } from './suites/blob-lock-store.ts';
import { newJob, T0 } from './suites/store-fixtures.ts';

const server = usePostgres();

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const s of opened.splice(0).reverse()) await s.close();
});

type Open = Omit<PostgresStorageOptions, 'blobs'>;
/** A storage on the database, closed after the test. */
const open = async (opts: Open) => {
  const storage = await createPostgresStorage({ blobs: createMemoryBlobStore(), ...opts });
  opened.push(storage);
  return storage;
};
/** A pg client on the database for looking behind the stores; ended after the test. */
const inspect = async (connectionString: string) => {
  const client = new pg.Client({ connectionString });
  await client.connect();
  opened.push({ close: () => client.end() });
  return client;
};
/** Resolves once `n` sessions wait for an advisory lock of the database. */
const waitingFor = (client: pg.Client) => (n: number) =>
  until(`${n} sessions waiting for a lock`, async () => {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from pg_locks
       where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`,
    );
    return rows[0].n >= n;
  });

blobLockStoreSuite('postgres, two storages from one URL', async () => {
  const url = await server.newDatabase();
  const [a, b] = [await open({ connectionString: url }), await open({ connectionString: url })];
  return { stores: [a.metadata.blobLocks!, b.metadata.blobLocks!], waiting: waitingFor(await inspect(url)), cleanup: async () => {} };
});

blobLockStoreSuite('postgres, injected pools the locks share with the metadata', async () => {
  const url = await server.newDatabase();
  // Just large enough: four lock sessions, the event bus's connection and one for the holders' work.
  const pool = () => new pg.Pool({ connectionString: url, max: 6 });
  const [a, b] = [await open({ pool: pool() }), await open({ pool: pool() })];
  return { stores: [a.metadata.blobLocks!, b.metadata.blobLocks!], waiting: waitingFor(await inspect(url)), cleanup: async () => {} };
});

describe('blob locks on PostgreSQL', () => {
  it('holders whose work needs the main pool never starve it, however many wait: more holders than either pool has connections all finish', async () => {
    const url = await server.newDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    const storage = await open({ pool, events: false, blobLocks: { connections: 2 } });
    const locks = storage.metadata.blobLocks!;
    const work = (i: number) =>
      locks.withBlobLock(`blake3/k${i}`, async () => {
        // Metadata queries on the pool the lock sessions come from, as a commit's are.
        for (let q = 0; q < 3; q++) await storage.metadata.initSetting(`s${i}`, `v${q}`);
        return storage.metadata.initSetting(`s${i}`, 'last');
      });
    expect(await Promise.all(Array.from({ length: 12 }, (_, i) => work(i)))).toEqual(Array.from({ length: 12 }, () => 'v0'));
  });

  it('an injected pool too small for the lock sessions beside the rest is refused, saying what to do; blobLocks: false has none', async () => {
    const url = await server.newDatabase();
    const small = new pg.Pool({ connectionString: url, max: 5 });
    // Ended by the storage below that takes it; here only if a failure came first.
    opened.push({ close: async () => void (small.ended || (await small.end())) });
    await expect(createPostgresStorage({ pool: small, blobs: createMemoryBlobStore() })).rejects.toThrow(
      /at most 5 connections.*need 6.*pool of its own, fewer blobLocks.connections, or a larger pool/,
    );
    // A pool of their own for the locks, or fewer of them, fits.
    const own = new pg.Pool({ connectionString: url, max: 4 });
    const withOwn = await open({ pool: small, blobLocks: { pool: own } });
    expect(await withOwn.metadata.blobLocks!.withBlobLock('blake3/k', async () => 'ok')).toBe('ok');
    await withOwn.close();
    expect([small.ended, own.ended]).toEqual([true, true]);
    const fewer = await open({ pool: new pg.Pool({ connectionString: url, max: 5 }), blobLocks: { connections: 3 } });
    expect(fewer.metadata.blobLocks).toBeDefined();
    expect((await open({ connectionString: url, blobLocks: false })).metadata.blobLocks).toBeUndefined();
    await expect(createPostgresStorage({ connectionString: url, blobs: createMemoryBlobStore(), blobLocks: { connections: 0 } })).rejects.toThrow(
      /positive integer/,
    );
  });

  it('a key locked in one schema is free in another of the same database, and the runner lock never meets a blob lock', async () => {
    const url = await server.newDatabase();
    const one = await open({ connectionString: url, schema: 'one', exclusiveRunner: true });
    const two = await open({ connectionString: url, schema: 'two' });
    await one.metadata.claimRunner!();
    const log: string[] = [];
    await one.metadata.blobLocks!.withBlobLock('blake3/k', async () => {
      log.push('one');
      await two.metadata.blobLocks!.withBlobLock('blake3/k', async () => void log.push('two'));
    });
    expect(log).toEqual(['one', 'two']);
  });
});

describe('two storages on one PostgreSQL database', () => {
  it('of concurrent claims of one idempotency key, through both, exactly one wins, for a new key and for an expired one', async () => {
    const url = await server.newDatabase();
    const [a, b] = [await open({ connectionString: url }), await open({ connectionString: url })];
    const claim = (now: number) =>
      Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).metadata.claimIdempotencyKey('acc', 'key-1', now, now + 10)));
    expect((await claim(T0)).filter(Boolean)).toHaveLength(1);
    expect((await claim(T0 + 10)).filter(Boolean)).toHaveLength(1);
  });

  it('concurrent creates through both never exceed the queue bounds: exactly as many as fit are inserted', async () => {
    const url = await server.newDatabase();
    const [a, b] = [await open({ connectionString: url }), await open({ connectionString: url })];
    const isRefusal = (r: JobSummary | QueueRefusal): r is QueueRefusal => 'refused' in r;
    const own = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).metadata.createJob(newJob(`a${i}`), { maxQueued: 100, maxQueuedPerAccount: 4 })),
    );
    expect(own.filter((r) => !isRefusal(r))).toHaveLength(4);
    const all = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).metadata.createJob(newJob(`b${i}`, { account_id: `acc-${i % 5}` }), { maxQueued: 10 })),
    );
    expect(all.filter((r) => !isRefusal(r))).toHaveLength(6);
    expect(all.filter(isRefusal).every((r) => r.refused === 'queue' && r.queued === 10)).toBe(true);
    expect(await a.metadata.countJobs(['queued'])).toBe(10);
  });
});
