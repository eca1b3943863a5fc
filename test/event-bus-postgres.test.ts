// The PostgreSQL event bus (storage/sql/pg-event-bus.ts) on a real server
// (test/helpers/postgres.ts): the conformance suite with two storages on one
// database; then what is its own: the LISTEN connection terminated by the
// server and brought back, payload rows that outlive their use removed, a
// reference whose row is gone counted as a gap, schemas that do not hear
// each other, and channel names PostgreSQL accepts whatever the bus is given.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPgEventBus, pgChannelName } from '../storage/sql/pg-event-bus.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { Database } from '../storage/sql/schema.ts';
import { usePostgres } from './helpers/postgres.ts';
import { eventBusSuite, inbox, largePayload } from './suites/event-bus.ts';

const server = usePostgres();

const openStorage = (connectionString: string, schema?: string) =>
  createPostgresStorage({ connectionString, schema, blobs: createMemoryBlobStore() });

eventBusSuite('postgres', async () => {
  const url = await server.newDatabase();
  const [a, b] = [await openStorage(url), await openStorage(url)];
  return {
    a: a.events!,
    b: b.events!,
    cleanup: async () => {
      await a.close();
      await b.close();
    },
  };
});

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const s of opened.splice(0).reverse()) await s.close();
});
const open = async (url: string, schema?: string) => {
  const storage = await openStorage(url, schema);
  opened.push(storage);
  return storage;
};
const client = async (url: string) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  opened.push({ close: () => c.end() });
  return c;
};

describe('postgres event bus specifics', () => {
  it('listens again after the server ends its LISTEN connection, says so (onLive), and messages flow again', async () => {
    const url = await server.newDatabase();
    const [a, b] = [await open(url), await open(url)];
    const box = inbox(b.events!, 'job:r');
    await box.live();
    await a.events!.publish('job:r', 'before');
    expect(await box.received(1)).toEqual(['before']);

    const admin = await client(url);
    const killed = await admin.query(
      "select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'graphrun events' and datname = current_database()",
    );
    expect(killed.rows).toEqual([{ ok: true }]);
    // The second onLive: listening again on a new session, after which nothing is lost.
    await box.live(2);
    await a.events!.publish('job:r', 'after');
    expect(await box.received(2)).toEqual(['before', 'after']);
    expect(b.events!.stats()).toMatchObject({ sessions: 2 });
  });

  it('sends a payload over 8000 bytes by reference through event_payloads, and removes the rows once past their life', async () => {
    const url = await server.newDatabase();
    const storage = await open(url);
    const pool = new pg.Pool({ connectionString: url });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    opened.push({ close: () => db.destroy() });
    // Starts at the real time: the receiving bus sweeps old rows by its own clock.
    let clock = Date.now();
    const bus = createPgEventBus({ db, schema: null, connect: () => pool.connect(), now: () => clock, spillTtlMs: 5000 });
    opened.push(bus);
    const box = inbox(storage.events!, 'job:s');
    await box.live();

    const big = largePayload(50_000);
    await bus.publish('job:s', 'inline');
    await bus.publish('job:s', big);
    expect(await box.received(2)).toEqual(['inline', big]);
    expect(bus.stats()).toMatchObject({ published: 2, spilled: 1 });
    expect(storage.events!.stats()).toMatchObject({ received: 2, fetched: 1 });
    const rows = () => db.selectFrom('event_payloads').select('id').execute();
    expect(await rows()).toHaveLength(1);

    expect(await bus.sweep()).toBe(0);
    clock += 5001;
    expect(await bus.sweep()).toBe(1);
    expect(await rows()).toEqual([]);
  });

  it('counts a reference whose row is gone as a gap: the subscribers are told to re-read (onLive)', async () => {
    const url = await server.newDatabase();
    const storage = await open(url);
    const box = inbox(storage.events!, 'job:g');
    await box.live();
    const admin = await client(url);
    await admin.query('select pg_notify($1, $2)', [pgChannelName(null, 'job:g'), 'elsewhere @no-such-row']);
    await box.live(2);
    expect(box.messages).toEqual([]);
  });

  it('keeps storages in different schemas of one database apart', async () => {
    const url = await server.newDatabase();
    const [one, alsoOne, two, alsoTwo] = [
      await open(url, 'tenant_one'),
      await open(url, 'tenant_one'),
      await open(url, 'tenant_two'),
      await open(url, 'tenant_two'),
    ];
    const [boxOne, boxTwo] = [inbox(one.events!, 'account:a'), inbox(two.events!, 'account:a')];
    await Promise.all([boxOne.live(), boxTwo.live()]);
    await alsoTwo.events!.publish('account:a', 'for two');
    await alsoOne.events!.publish('account:a', 'for one');
    // Each heard its own schema's message; one's came later, so two's would have been there first.
    expect(await boxOne.received(1)).toEqual(['for one']);
    expect(await boxTwo.received(1)).toEqual(['for two']);
    // By reference too: the payload row is in the schema's own table.
    const big = largePayload(20_000);
    await alsoTwo.events!.publish('account:a', big);
    expect(await boxTwo.received(2)).toEqual(['for two', big]);
  });

  it('names channels so PostgreSQL takes any of them: readable when short and plain, hashed otherwise, never the same for two', () => {
    expect(pgChannelName(null, 'job:5b1c0e0a-7c1f-4c55-9d38-3a9a1d0c2f11')).toBe('graphrun::job:5b1c0e0a-7c1f-4c55-9d38-3a9a1d0c2f11');
    expect(pgChannelName('graphrun_1', 'account:alice')).toBe('graphrun:graphrun_1:account:alice');
    const odd = ['account:'.padEnd(200, 'x'), 'account:naïve', 'account:line\nbreak'];
    const names = odd.map((c) => pgChannelName(null, c));
    for (const n of names) expect(n).toMatch(/^graphrun#[A-Za-z0-9_-]{43}$/);
    expect(new Set([...names, pgChannelName('s', odd[0]), pgChannelName('s:x', 'job:1'), pgChannelName('s', 'x:job:1')]).size).toBe(odd.length + 3);
  });
});
