// Two services on one PostgreSQL database see the same engine servers: one
// added, drained or removed through A shows up in B's engine, at once over
// the event bus (B polls never: serverSyncIntervalMs 0), and without a bus
// by B's periodic reconcile.
import { afterEach, expect, it } from 'vitest';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { OpenStorage } from './helpers/harness.ts';
import { submitOk, until, waitForJob } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';
import { addBody, type FakePool, type PoolService, poolJob, startFakePool, startPoolService } from './helpers/server-pool.ts';

const server = usePostgres();
let pool: FakePool | undefined;
let services: PoolService[] = [];
afterEach(async () => {
  for (const s of services.reverse()) await s.close();
  services = [];
  await pool?.close();
  pool = undefined;
});

async function twoServices(opts: { events: boolean; intervalB: number }): Promise<[PoolService, PoolService]> {
  const url = await server.newDatabase();
  const openStorage: OpenStorage = (blobs) => createPostgresStorage({ connectionString: url, blobs, ...(opts.events ? {} : { events: false }) });
  const a = await startPoolService('node-server', { openStorage });
  services.push(a);
  const b = await startPoolService('in-process', { openStorage, service: { serverSyncIntervalMs: opts.intervalB } });
  services.push(b);
  return [a, b];
}

const urlsOf = (s: PoolService) => s.engine.servers().map((x) => `${x.url} ${x.state}`);

it("over the event bus: a server added, drained and removed through A follows in B's engine, and B runs jobs on it", async () => {
  pool = await startFakePool(1);
  const [w0] = pool.workers;
  const [a, b] = await twoServices({ events: true, intervalB: 0 });
  const { id }: any = await (await a.ops('/ops/servers', addBody(w0.url))).json();
  await until("the server in B's engine", () => urlsOf(b).join() === `${w0.url} active`, 5000);
  await until("B's engine ready", () => b.engine.readiness().state === 'ready', 5000);
  const job = await submitOk(b, poolJob(1));
  await waitForJob(b, job.id, 'succeeded', 5000);
  expect(pool.ran(w0)).toContain(job.id);
  expect((await a.ops(`/ops/servers/${id}/drain`, { method: 'POST' })).status).toBe(202);
  await until('draining in B', () => urlsOf(b).join() === `${w0.url} draining`, 5000);
  expect((await a.ops('/ops/servers', addBody(w0.url))).status).toBe(200);
  await until('active again in B', () => urlsOf(b).join() === `${w0.url} active`, 5000);
  expect((await a.ops(`/ops/servers/${id}`, { method: 'DELETE' })).status).toBe(204);
  await until('gone from B', () => urlsOf(b).length === 0, 5000);
  expect(urlsOf(a)).toEqual([]);
});

it("without a bus, B's periodic reconcile converges on the stored set", async () => {
  pool = await startFakePool(2);
  const [w0, w1] = pool.workers;
  const [a, b] = await twoServices({ events: false, intervalB: 50 });
  await a.ops('/ops/servers', addBody(w0.url));
  // Added through B, seen by A only at its next start or reconcile: A's own list reads the store.
  await b.ops('/ops/servers', addBody(w1.url));
  await until("both servers in B's engine", () => urlsOf(b).sort().join() === [`${w0.url} active`, `${w1.url} active`].sort().join(), 5000);
  const listed: any = await (await a.ops('/ops/servers')).json();
  expect(listed.servers.map((s: { url: string }) => s.url).sort()).toEqual([w0.url, w1.url].sort());
});
