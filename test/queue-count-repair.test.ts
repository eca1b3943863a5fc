// The SQL store's counts of queued jobs (storage/sql/queue-counts.ts) set
// right by repairQueueCounts when they went wrong (a process of an older
// version writing jobs beside a new one), on SQLite and PostgreSQL: a count
// too low starves its account, one too high refuses it at its bound, and a
// count left over with no queued job is cleared. The sweep runs it and logs
// each correction.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import type { Storage } from '../storage/types.ts';
import { recordingLogger } from './helpers/fake-service.ts';
import { usePostgres } from './helpers/postgres.ts';
import { newJob } from './suites/store-fixtures.ts';

const server = usePostgres();
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

interface Backend {
  open(): Promise<{ storage: Storage; corrupt(sql: string): Promise<void> }>;
}

const backends: Record<string, Backend> = {
  sqlite: {
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'graphrun-repair-'));
      closing.push(() => rm(dir, { recursive: true, force: true }));
      const filename = join(dir, 'graphrun.db');
      const storage = await createSqliteStorage({ filename, blobs: createMemoryBlobStore() });
      closing.push(() => storage.metadata.close());
      return {
        storage,
        // What an older process would leave: jobs written without their counts.
        async corrupt(sql) {
          const db = new Database(filename);
          db.exec(sql);
          db.close();
        },
      };
    },
  },
  postgres: {
    async open() {
      const connectionString = await server.newDatabase();
      const storage = await createPostgresStorage({ connectionString, blobs: createMemoryBlobStore() });
      closing.push(() => storage.metadata.close());
      return {
        storage,
        async corrupt(sql) {
          const client = new pg.Client({ connectionString });
          await client.connect();
          await client.query(sql);
          await client.end();
        },
      };
    },
  },
};

describe.each(Object.keys(backends))('queue count repair (%s)', (name) => {
  it('sets each wrong count to the queued jobs, says what it corrected, and leaves right ones', async () => {
    const { storage, corrupt } = await backends[name].open();
    const m = storage.metadata;
    for (const id of ['a1', 'a2', 'a3']) await m.createJob(newJob(id));
    for (const id of ['b1', 'b2']) await m.createJob(newJob(id, { account_id: 'acc2' }));
    await m.createJob(newJob('c1', { account_id: 'acc3' }));
    expect(await m.repairQueueCounts!()).toEqual([]);

    await corrupt(
      "update queue_counts set queued = 0 where account_id = 'acc1'; update queue_counts set queued = 7 where account_id = 'acc2'; " +
        "insert into queue_counts (account_id, queued) values ('ghost', 2); delete from queue_counts where account_id = 'acc3'",
    );
    // As the scheduler and the bounds see it now: acc1 starved, acc2 full, acc3 gone.
    expect((await m.listAccountsWithQueuedJobs(10)).map((a) => a.account_id)).toEqual(['acc2']);
    expect(await m.createJob(newJob('b3', { account_id: 'acc2' }), { maxQueuedPerAccount: 5 })).toMatchObject({ refused: 'account', queued: 7 });

    const fixed = await m.repairQueueCounts!();
    expect(fixed.sort((x, y) => x.account_id.localeCompare(y.account_id))).toEqual([
      { account_id: 'acc1', was: 0, is: 3 },
      { account_id: 'acc2', was: 7, is: 2 },
      { account_id: 'acc3', was: 0, is: 1 },
      { account_id: 'ghost', was: 2, is: 0 },
    ]);
    expect((await m.listAccountsWithQueuedJobs(10)).map((a) => a.account_id)).toEqual(['acc1', 'acc2', 'acc3']);
    expect([await m.countJobs(['queued']), await m.countJobs(['queued'], 'acc1'), await m.countJobs(['queued'], 'ghost')]).toEqual([6, 3, 0]);
    expect(await m.repairQueueCounts!()).toEqual([]);
  });

  it("runs in the sweep, which logs each correction; the starved account is in the scheduler's list again", async () => {
    const { storage, corrupt } = await backends[name].open();
    const logger = recordingLogger();
    const engine = createLocalEngine({ nodes: builtinNodes });
    const service = await createService({ storage, engine, logger, sweepIntervalMs: 0, runJobs: false });
    closing.push(() => service.close());
    // Not past its deadline, which the sweep would fail it for.
    await storage.metadata.createJob(newJob('a1', { created_at: Date.now(), expires_at: Date.now() + 86_400_000 }));
    await corrupt("update queue_counts set queued = 0 where account_id = 'acc1'");
    expect(await storage.metadata.listAccountsWithQueuedJobs(10)).toEqual([]);
    await service.sweep();
    expect(logger.lines.filter((r) => r.message === 'corrected the count of queued jobs of an account')).toEqual([
      expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ account_id: 'acc1', was: 0, is: 1 }) }),
    ]);
    expect((await storage.metadata.listAccountsWithQueuedJobs(10)).map((a) => a.account_id)).toEqual(['acc1']);
  });
});
