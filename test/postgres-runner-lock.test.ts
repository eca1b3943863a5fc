// exclusiveRunner: one job-running process per PostgreSQL database and
// schema (as per SQLite file: sqlite-runner-lock.test.ts); without it any
// number of runners share the database under leases. A second runner is refused
// saying why and what to do, an API-only instance may share the database,
// and the place frees when the runner closes or its session ends however it
// ends (the server ending a crashed process's connection).
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createService, RunnerLockError, type Service, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import { usePostgres } from './helpers/postgres.ts';

const server = usePostgres();

const services: Service[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

const open = (connectionString: string, schema?: string) =>
  createPostgresStorage({ connectionString, schema, blobs: createMemoryBlobStore(), exclusiveRunner: true });
async function start(connectionString: string, { runJobs = true, schema }: { runJobs?: boolean; schema?: string } = {}): Promise<Service> {
  const service = await createService({ storage: await open(connectionString, schema), runJobs, logger: silentLogger, sweepIntervalMs: 0 });
  services.push(service);
  return service;
}

describe('exclusiveRunner: one job runner per PostgreSQL database', () => {
  it('a second runner is refused; an API-only instance is not; closing frees the place', async () => {
    const url = await server.newDatabase();
    const first = await start(url);
    const second = await open(url);
    const refused = createService({ storage: second, logger: silentLogger, sweepIntervalMs: 0 });
    await expect(refused).rejects.toThrow(RunnerLockError);
    await expect(refused).rejects.toThrow(/Another process runs jobs on this PostgreSQL database \(schema "public"\).*runJobs: false/);
    await second.close();

    const apiOnly = await start(url, { runJobs: false });
    expect((await apiOnly.fetch(new Request('http://x/api/v2/openapi.json'))).status).toBe(200);

    await first.close();
    await start(url);
  });

  it('another schema of the same database has its own runner', async () => {
    const url = await server.newDatabase();
    await start(url, { schema: 'one' });
    await start(url, { schema: 'two' });
    const third = await open(url, 'one');
    await expect(createService({ storage: third, logger: silentLogger, sweepIntervalMs: 0 })).rejects.toThrow(/schema "one"/);
    await third.close();
  });

  it("the place frees when the runner's session ends without a close, as when its process dies", async () => {
    const url = await server.newDatabase();
    await start(url);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // The server ends the lock holder's session and waits until it is gone (as it does for a dead client's).
      const { rows } = await admin.query<{ ended: boolean }>(
        `select pg_terminate_backend(pid, 10000) as ended from pg_locks
         where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`,
      );
      expect(rows).toEqual([{ ended: true }]);
    } finally {
      await admin.end();
    }
    await start(url);
  });
});
