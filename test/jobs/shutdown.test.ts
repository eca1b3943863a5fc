// A graceful close while jobs run: nothing is lost. Jobs running on the
// closing instance go back to the queue (their work dies with the process)
// and run from the start on the next instance over the same storage. Rows a
// crash left behind are settled at start: a cancel in progress completes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import { createService, type Service, silentLogger } from '../../index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';
import { createTestNodes, waitWorkflow } from '../helpers/local-nodes.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function start(dir: string): Promise<Service> {
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(dir, 'db.sqlite'), blobs });
  return createService({
    storage,
    logger: silentLogger,
    sweepIntervalMs: 0,
    tierLimits: { free: 2 },
    engine: createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] }),
  });
}

const call = async (s: Service, path: string, body?: unknown) => {
  const init: RequestInit = body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const res = await s.fetch(new Request(`http://svc${path}`, init));
  return (await res.json()) as any;
};

async function until(s: Service, id: string, ok: (job: any) => boolean, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    const job = await call(s, `/api/v2/jobs/${id}`);
    if (ok(job)) return job;
    if (Date.now() > end) throw new Error(`job ${id} stuck at ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('graceful shutdown', () => {
  it('queues running jobs again and the next instance runs them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'graphrun-shutdown-'));
    dirs.push(dir);
    let s = await start(dir);
    const a = await call(s, '/api/v2/jobs', { workflow: waitWorkflow(1, 50, 40) });
    const b = await call(s, '/api/v2/jobs', { workflow: waitWorkflow(2, 50, 40) });
    await until(s, a.id, (j) => j.status === 'running' && j.progress?.step >= 1);
    await until(s, b.id, (j) => j.status === 'running');
    const before = Date.now();
    await s.close();
    expect(Date.now() - before).toBeLessThan(3000); // close aborts the runs, it does not wait them out

    s = await start(dir);
    const again = await until(s, a.id, (j) => j.status === 'succeeded', 20_000);
    expect(again.started_at).not.toBe(a.started_at);
    expect(again.progress.value).toBe(1);
    const bDone = await until(s, b.id, (j) => j.status === 'succeeded', 20_000);
    expect(bDone.error).toBeNull();
    await s.close();
  }, 40_000);

  it('at start, a job left canceling becomes canceled and one left running runs again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'graphrun-recover-'));
    dirs.push(dir);
    const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
    const storage = await createSqliteStorage({ filename: join(dir, 'db.sqlite'), blobs });
    await storage.metadata.migrate();
    const now = Date.now();
    const row = (id: string, status: string) => ({
      id,
      account_id: 'local',
      status,
      workflow: waitWorkflow(1, 1, 1),
      created_at: now,
      expires_at: now + 60_000,
    });
    const canceling = crypto.randomUUID();
    const running = crypto.randomUUID();
    await storage.metadata.createJob(row(canceling, 'canceling'));
    await storage.metadata.createJob(row(running, 'running'));
    await storage.metadata.close();

    const s = await start(dir);
    const c = await call(s, `/api/v2/jobs/${canceling}`);
    expect(c.status).toBe('canceled');
    expect(c.completed_at).not.toBeNull();
    const r = await until(s, running, (j) => j.status === 'succeeded');
    expect(r.error).toBeNull();
    await s.close();
  });
});
