// A deployment's stopped flag lives in its storage: on SQLite files it
// survives a restart of the service (stopped stays stopped, started stays
// started, jobs made before are still there), and another instance on the
// same file learns of it. A storage belongs to the deployment that first
// started on it: another deployment id on the same file (or on the same
// memory storage) is refused at start with DeploymentStorageError.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createService, DeploymentStorageError, RunnerLockError, type Service, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { controlledEngine, type GatewayHarness, opAuth, pollUntil, quickWorkflow, reply, startGateway } from './helpers/deployments.ts';
import { MODES, uploadForm } from './helpers/harness.ts';
import { getJob, submitOk, waitForJob } from './helpers/jobs.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-deployments-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

const sqlite = async (name: string) =>
  createSqliteStorage({ filename: join(dir, `${name}.db`), blobs: await createFsBlobStore({ dir: join(dir, `${name}-blobs`) }) });

/** A gateway of 'default' (memory) and 'sdxl' on the SQLite file `name`. */
async function onFile(mode: (typeof MODES)[number], name: string): Promise<GatewayHarness> {
  const g = await startGateway(mode, { deployments: [{ id: 'default' }, { id: 'sdxl', storage: await sqlite(name) }] });
  open.push(g);
  return g;
}

const view = async (g: GatewayHarness) => (await reply(await g.at({ host: 'sdxl' }).fetch('/ops/deployment', { headers: opAuth() }))).body;
const post = (g: GatewayHarness, path: string) => g.at({ host: 'sdxl' }).fetch(path, { method: 'POST', headers: opAuth() });

describe.each(MODES)('deployment condition on SQLite (%s)', (mode) => {
  it('stopped survives a restart of the service; started does too; jobs made before are still there', async () => {
    const name = `restart-${mode}`;
    let g = await onFile(mode, name);
    const job = await submitOk(g.at({ host: 'sdxl' }), quickWorkflow(3));
    await waitForJob(g.at({ host: 'sdxl' }), job.id, 'succeeded', 15_000);
    const stopped = await reply(await post(g, '/ops/deployment/stop'));
    expect(stopped.body.state).toBe('stopped');
    await g.close();

    g = await onFile(mode, name);
    // Stopped from the first request on, with the time of the first stop.
    expect(await view(g)).toMatchObject({ id: 'sdxl', state: 'stopped', detail: stopped.body.detail });
    const refused = await reply(await g.at({ host: 'sdxl' }).fetch(`/api/v2/jobs/${job.id}`));
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 422, code: 'deployment_stopped' });
    // The memory-backed deployment beside it was never stopped.
    expect((await g.at('none').fetch('/api/v2/jobs')).status).toBe(200);

    expect((await reply(await post(g, '/ops/deployment/start'))).body.state).toBe('ready');
    await g.close();

    g = await onFile(mode, name);
    expect(await view(g)).toMatchObject({ id: 'sdxl', state: 'ready', detail: null });
    const again = await getJob(g.at({ host: 'sdxl' }), job.id);
    expect({ status: again.res.status, job: again.body.status }).toEqual({ status: 200, job: 'succeeded' });
    const next = await submitOk(g.at({ host: 'sdxl' }), quickWorkflow(4));
    await waitForJob(g.at({ host: 'sdxl' }), next.id, 'succeeded', 15_000);
  });
});

describe('a storage belongs to one deployment', () => {
  const start = (storage: Parameters<typeof createService>[0]['storage'], deploymentId: string | undefined, extra = {}) =>
    createService({
      storage,
      deploymentId,
      engine: controlledEngine().engine,
      logger: silentLogger,
      sweepIntervalMs: 0,
      operatorToken: 'op-secret',
      ...extra,
    });

  it('on a SQLite file: another deployment id is refused at start (after the owner closed, and while it runs); the owner starts again', async () => {
    const first = await start(await sqlite('owned'), 'sdxl');
    open.push(first);
    // While the owner runs: an API-only instance (it may share the file) of another deployment.
    const other = await sqlite('owned');
    const refusedLive = start(other, 'flux', { runJobs: false });
    await expect(refusedLive).rejects.toThrow(DeploymentStorageError);
    await expect(refusedLive).rejects.toThrow(/belongs to the deployment "sdxl", not "flux"/);
    await other.close();
    await first.close();

    for (const id of ['flux', undefined]) {
      const storage = await sqlite('owned');
      const refused = start(storage, id);
      await expect(refused).rejects.toThrow(DeploymentStorageError);
      await expect(refused).rejects.toThrow(`not "${id ?? 'default'}"`);
      await storage.close();
    }
    const owner = await start(await sqlite('owned'), 'sdxl');
    open.push(owner);
    const res = await owner.fetch(new Request('http://x/ops/deployment', { headers: opAuth() }));
    expect(((await res.json()) as any).id).toBe('sdxl');
  });

  it('on one memory storage: a second deployment is refused, a second instance of the same one is not', async () => {
    const storage = createMemoryStorage();
    const a = await start(storage, 'alpha');
    open.push(a);
    await expect(start(storage, 'beta', { runJobs: false })).rejects.toThrow(DeploymentStorageError);
    const again = await start(storage, 'alpha', { runJobs: false });
    open.push(again);
    expect(again.deploymentId).toBe('alpha');
  });

  it('two instances of one deployment on a SQLite file agree: a stop on one is seen by the other, and so is the start', async () => {
    const runner = await start(await sqlite('shared'), 'sdxl', { serverSyncIntervalMs: 50 });
    open.push(runner);
    const api = await start(await sqlite('shared'), 'sdxl', { runJobs: false, serverSyncIntervalMs: 50 });
    open.push(api);
    const state = async (s: Service) =>
      ((await (await s.fetch(new Request('http://x/ops/deployment', { headers: opAuth() }))).json()) as any).state as string;
    const stop = await api.fetch(new Request('http://x/ops/deployment/stop', { method: 'POST', headers: opAuth() }));
    expect(stop.status).toBe(200);
    await pollUntil(
      'the runner sees the stop',
      () => state(runner),
      (s) => s === 'stopped',
    );
    const refused = await runner.fetch(new Request('http://x/api/v2/jobs'));
    expect(refused.status).toBe(422);
    await refused.body?.cancel();
    await api.fetch(new Request('http://x/ops/deployment/start', { method: 'POST', headers: opAuth() }));
    await pollUntil(
      'the runner sees the start',
      () => state(runner),
      (s) => s === 'ready',
    );
    // A job taken by the API-only instance is run by the runner now that it is started.
    const created = await api.fetch(
      new Request('http://x/api/v2/jobs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: quickWorkflow() }),
      }),
    );
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as any;
    await pollUntil(
      'the job succeeded',
      async () => ((await (await runner.fetch(new Request(`http://x/api/v2/jobs/${id}`))).json()) as any).status,
      (s) => s === 'succeeded',
    );
  });

  it('a stop on an instance that has not yet heard of another instance’s start is stored, not lost', async () => {
    // Before the next re-read (the default is every 5 s), an instance goes by what it last read.
    const slow = { serverSyncIntervalMs: 60_000 };
    const a = await start(await sqlite('stale'), 'sdxl', slow);
    open.push(a);
    const b = await start(await sqlite('stale'), 'sdxl', { ...slow, runJobs: false });
    open.push(b);
    const call = async (s: Service, path: string, method = 'POST') =>
      (await (await s.fetch(new Request(`http://x${path}`, { method, headers: opAuth() }))).json()) as any;
    expect((await call(a, '/ops/deployment/stop')).state).toBe('stopped');
    // B started it again; A has not re-read the flag yet.
    expect((await call(b, '/ops/deployment/start')).state).toBe('ready');
    // The operator stops it on A: the answer says stopped...
    expect((await call(a, '/ops/deployment/stop')).state).toBe('stopped');
    // ...and so must the storage, which every other instance and the next start read.
    const c = await start(await sqlite('stale'), 'sdxl', { ...slow, runJobs: false });
    open.push(c);
    expect((await call(c, '/ops/deployment', 'GET')).state).toBe('stopped');
  });

  it('a start that fails (a runner lock held elsewhere) leaves no claim behind: the blob directory is free once its owner closes', async () => {
    const blobs = join(dir, 'locked-blobs');
    const file = async (name: string) => createSqliteStorage({ filename: join(dir, `${name}.db`), blobs: await createFsBlobStore({ dir: blobs }) });
    const owner = await start(await file('locked'), 'sdxl');
    const second = await file('locked');
    await expect(start(second, 'sdxl')).rejects.toThrow(RunnerLockError);
    await second.close();
    await owner.close();
    // Neither the owner nor the start that failed still holds the place: another deployment may use it now.
    const other = await start(await file('locked-other'), 'flux');
    open.push(other);
    expect(other.deploymentId).toBe('flux');
  });

  it('two deployments on their own SQLite files but one blob directory: refused, or at least one never deletes the other’s bytes', async () => {
    const blobs = join(dir, 'shared-blobs');
    const file = async (name: string) => createSqliteStorage({ filename: join(dir, `${name}.db`), blobs: await createFsBlobStore({ dir: blobs }) });
    const a = await start(await file('blobs-a'), 'alpha');
    open.push(a);
    // B's clock an hour ahead: every blob is past the orphan grace for it, as it will be an hour from now.
    const storageB = await file('blobs-b');
    let b: Service;
    try {
      b = await start(storageB, 'beta', { now: () => Date.now() + 3_600_000 + 60_000 });
    } catch (err) {
      // Refusing the second deployment at start is one right answer.
      expect(err).toBeInstanceOf(DeploymentStorageError);
      await storageB.close();
      return;
    }
    open.push(b);
    const up = await a.fetch(new Request('http://x/api/v2/assets', { method: 'POST', body: uploadForm('alpha bytes') }));
    expect(up.status).toBe(201);
    const asset: any = await up.json();
    await b.sweep();
    const content = await a.fetch(new Request(asset.url));
    expect(content.status).toBe(200);
    expect(await content.text()).toBe('alpha bytes');
  });
});
