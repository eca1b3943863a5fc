// Registered engine servers survive a restart: a service opened on the same
// SQLite file after the first one closed has the active ones in its engine
// (beside its own --worker URLs), keeps a draining one out of its pool, and
// runs jobs on what it was given.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import type { OpenStorage } from './helpers/harness.ts';
import { submitOk, until, waitForJob } from './helpers/jobs.ts';
import { addBody, type FakePool, poolJob, startFakePool, startPoolService } from './helpers/server-pool.ts';

let pool: FakePool | undefined;
let dir: string | undefined;
afterEach(async () => {
  await pool?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  pool = dir = undefined;
});

it('a second service on the same SQLite file has the registered servers in its engine', async () => {
  pool = await startFakePool(3);
  const [w0, w1, w2] = pool.workers;
  dir = await mkdtemp(join(tmpdir(), 'graphrun-servers-'));
  const openStorage: OpenStorage = (blobs) => createSqliteStorage({ filename: join(dir!, 'graphrun.db'), blobs });

  const a = await startPoolService('in-process', { openStorage });
  await a.ops('/ops/servers', addBody(w0.url));
  const drained: any = await (await a.ops('/ops/servers', addBody(w1.url))).json();
  expect((await a.ops(`/ops/servers/${drained.id}/drain`, { method: 'POST' })).status).toBe(202);
  await a.close();

  // w2 is this start's own --worker: it stays beside the stored ones.
  const b = await startPoolService('in-process', { openStorage, configured: [w2.url] });
  try {
    expect(b.engine.servers().map((s) => [s.url, s.state])).toEqual([
      [w2.url, 'active'],
      [w0.url, 'active'],
    ]);
    const list: any = await (await b.ops('/ops/servers')).json();
    expect(list.servers.map((s: { url: string; state: string; live: unknown }) => [s.url, s.state, s.live === null])).toEqual([
      [w0.url, 'active', false],
      [w1.url, 'draining', true],
    ]);
    // Both servers take a job (each waits at its gate), so both are in the pool.
    pool.gates[0].hold();
    pool.gates[2].hold();
    const jobs = [await submitOk(b, poolJob(1)), await submitOk(b, poolJob(2))];
    await until('a job on each server', () => jobs.every((j) => pool!.runningOn(j.id) !== undefined), 5000);
    expect(new Set(jobs.map((j) => pool!.runningOn(j.id)))).toEqual(new Set([w0, w2]));
    pool.gates[0].open();
    pool.gates[2].open();
    for (const j of jobs) await waitForJob(b, j.id, 'succeeded', 5000);
    expect(pool.ran(w1)).toEqual([]);
  } finally {
    await b.close();
  }
});
