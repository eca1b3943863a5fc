// Engine servers that come and go at run time (addServer, drainServer,
// removeServer) through the service, on fake workers whose FakeGenerate node
// waits at a gate the test holds: a pool that starts empty is not ready until
// a server joins; jobs waiting for a slot take a server that joins; a
// draining server finishes its job and takes no new one, and its drain
// settles then; a removed busy server's job runs again elsewhere; the node
// classes follow the members; with shared slots a joined server is claimed
// like the others.
import { afterEach, describe, expect, it } from 'vitest';
import type { ComfyEngine, ComfyEngineOptions } from '../engine/comfyui/engine.ts';
import type { WorkerSlotRegistry } from '../engine/comfyui/worker-slots.ts';
import { defineNode } from '../engine/local/define-node.ts';
import { createModelNodes, type ModelNodes, modelWorkflow } from './fakes/comfyui-model-nodes.ts';
import type { FakeWorker } from './fakes/comfyui-worker.ts';
import { submit, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService | undefined;
afterEach(async () => {
  for (const m of models) m.open();
  await s?.close();
  s = undefined;
});

const onlyOnSecond = defineNode({
  name: 'OnlyOnSecond',
  category: 'test',
  output_node: true,
  required: { value: ['INT', {}] },
  run: ({ value }) => ({ outputs: [], ui: { text: [String(value)] } }),
});

let models: ModelNodes[] = [];
/** Two fake workers; the engine starts with those of `initial` (indexes). */
async function start(initial: number[], engine: Partial<ComfyEngineOptions> = {}): Promise<WorkerService> {
  models = [0, 1].map(() => createModelNodes({ checkpoints: ['a.safetensors', 'b.safetensors'] }));
  const specs = models.map((m, i) => ({ nodes: i === 1 ? [...m.nodes, onlyOnSecond] : m.nodes }));
  // Every job here loads the same checkpoint: without a bound of 0 they would wait for its busy holder (engine-comfy-affinity.test.ts).
  s = await startWorkerService({ workers: specs, waitConnected: false, engine: { affinityWaitMs: 0, ...engine, workers: [] } });
  for (const i of initial) engineOf(s).addServer(s.workers[i].url);
  await s.connected(initial.map((i) => s!.workers[i]));
  return s;
}
const engineOf = (svc: WorkerService) => svc.engine as ComfyEngine;
const ran = (w: FakeWorker) => w.submissions.map((x) => x.prompt_id);
const job = (seed: number) => modelWorkflow('a.safetensors', seed);
const runningOn = (w: FakeWorker, id: string) => w.queue.running?.item[1] === id;

describe('a pool that starts empty', () => {
  it('is not ready and says why; a server added at run time makes it ready and runs jobs', async () => {
    await start([]);
    const e = engineOf(s!);
    expect(e.readiness()).toEqual({ state: 'unavailable', detail: expect.stringMatching(/no engine server/) });
    expect(e.servers()).toEqual([]);
    const refused = await submit(s!, { workflow: job(1) });
    expect(refused.res.status).toBe(429);
    e.addServer(`${s!.workers[0].url}/`);
    await until('ready', () => e.readiness().state === 'ready', 5000);
    expect(e.servers()).toMatchObject([{ url: s!.workers[0].url, state: 'active', healthy: true, busy: 0 }]);
    const ok = await submitOk(s!, job(2));
    await waitForJob(s!, ok.id, 'succeeded', 5000);
    expect(ran(s!.workers[0])).toEqual([ok.id]);
  });

  it('refuses a URL that is not http(s); adding a known server again changes nothing', async () => {
    await start([0]);
    const e = engineOf(s!);
    expect(() => e.addServer('gpu-1:8188')).toThrow(/not an http\(s\) URL/);
    e.addServer(s!.workers[0].url);
    expect(e.servers()).toHaveLength(1);
  });
});

describe('servers joining, draining and leaving while jobs stream', () => {
  it('jobs waiting for a slot are taken by a server that joins', async () => {
    await start([0]);
    const [w0, w1] = s!.workers;
    models[0].hold();
    const first = await submitOk(s!, job(10));
    await until('the first job running', () => runningOn(w0, first.id), 5000);
    const waiting = [];
    for (let i = 0; i < 3; i++) waiting.push(await submitOk(s!, job(11 + i)));
    engineOf(s!).addServer(w1.url);
    for (const j of waiting) await waitForJob(s!, j.id, 'succeeded', 5000);
    // Worker 0 still holds the first job: the joined server ran all three.
    expect(ran(w1)).toEqual(expect.arrayContaining(waiting.map((j) => j.id)));
    expect(runningOn(w0, first.id)).toBe(true);
    models[0].open();
    await waitForJob(s!, first.id, 'succeeded', 5000);
  });

  it('a draining server finishes its job, takes no new one, and its drain settles then; adding it again reactivates it', async () => {
    await start([0, 1]);
    const [w0, w1] = s!.workers;
    const e = engineOf(s!);
    models[0].hold();
    models[1].hold();
    const j0 = await submitOk(s!, job(20));
    await until('a job on worker 0', () => runningOn(w0, j0.id), 5000);
    const j1 = await submitOk(s!, job(21));
    await until('a job on worker 1', () => runningOn(w1, j1.id), 5000);
    let drained = false;
    const drain = e.drainServer(w1.url).then(() => {
      drained = true;
    });
    expect(e.servers().find((x) => x.url === w1.url)).toMatchObject({ state: 'draining', busy: 1 });
    models[0].open();
    await waitForJob(s!, j0.id, 'succeeded', 5000);
    const more = [];
    for (let i = 0; i < 3; i++) more.push(await submitOk(s!, job(22 + i)));
    for (const j of more) await waitForJob(s!, j.id, 'succeeded', 5000);
    expect(drained).toBe(false);
    models[1].open();
    await drain;
    expect((await waitForJob(s!, j1.id, 'succeeded', 5000)).status).toBe('succeeded');
    const after = await submitOk(s!, job(30));
    await waitForJob(s!, after.id, 'succeeded', 5000);
    expect(ran(w1)).toEqual([j1.id]);
    expect(ran(w0)).toEqual([j0.id, ...more.map((j) => j.id), after.id]);

    e.addServer(w1.url);
    expect(e.servers().find((x) => x.url === w1.url)).toMatchObject({ state: 'active' });
    models[0].hold();
    const busy = await submitOk(s!, job(31));
    await until('worker 0 busy', () => runningOn(w0, busy.id), 5000);
    const back = await submitOk(s!, job(32));
    await waitForJob(s!, back.id, 'succeeded', 5000);
    expect(ran(w1)).toContain(back.id);
  });

  it('a removed busy server: its job runs again on another server, and later jobs never go there', async () => {
    await start([0, 1]);
    const [w0, w1] = s!.workers;
    const e = engineOf(s!);
    models[0].hold();
    models[1].hold();
    const j0 = await submitOk(s!, job(40));
    await until('a job on worker 0', () => runningOn(w0, j0.id), 5000);
    const j1 = await submitOk(s!, job(41));
    await until('a job on worker 1', () => runningOn(w1, j1.id), 5000);
    await e.removeServer(w1.url);
    expect(e.servers().map((x) => x.url)).toEqual([w0.url]);
    // Its prompt there was sent a cancel.
    const cancel = `/api/jobs/${j1.id}/cancel`;
    await until('the cancel reached worker 1', () => w1.requests.some((r) => r.method === 'POST' && r.path === cancel), 5000);
    models[0].open();
    const done = await waitForJob(s!, j1.id, 'succeeded', 5000);
    expect(done.status).toBe('succeeded');
    expect(ran(w0)).toEqual([j0.id, j1.id]);
    const later = await submitOk(s!, job(42));
    await waitForJob(s!, later.id, 'succeeded', 5000);
    expect(ran(w1)).toEqual([j1.id]);
  });

  it('the node classes follow the members', async () => {
    await start([0]);
    const [, w1] = s!.workers;
    const e = engineOf(s!);
    const has = async () => Object.hasOwn(await e.nodeDefinitions(), 'OnlyOnSecond');
    expect(await has()).toBe(false);
    e.addServer(w1.url);
    await until('the joined server’s classes', has, 5000);
    const ok = await submitOk(s!, { 1: { class_type: 'OnlyOnSecond', inputs: { value: 7 } } });
    await waitForJob(s!, ok.id, 'succeeded', 5000);
    expect(ran(w1)).toEqual([ok.id]);
    await e.drainServer(w1.url);
    expect(await has()).toBe(false);
    e.addServer(w1.url);
    expect(await has()).toBe(true);
    await e.removeServer(w1.url);
    expect(await has()).toBe(false);
  });
});

describe('with shared slots', () => {
  /** The registry's promise, kept in memory: at most `capacity` slots per worker. */
  function memoryRegistry() {
    const slots = new Map<string, { worker: string; owner: string }>();
    const max = { seen: 0 };
    const registry: WorkerSlotRegistry = {
      async claim(c) {
        const taken = [...slots.values()].filter((x) => x.worker === c.worker).length;
        if (taken >= c.capacity && !slots.has(c.job_id)) return false;
        slots.set(c.job_id, { worker: c.worker, owner: c.owner });
        max.seen = Math.max(max.seen, taken + 1);
        return true;
      },
      renew: async (r) => slots.get(r.job_id)?.worker === r.worker,
      async release(r) {
        if (slots.get(r.job_id)?.worker === r.worker) slots.delete(r.job_id);
      },
      holder: async (jobId) => slots.get(jobId)?.worker ?? null,
    };
    return { registry, slots, max };
  }

  it('a server that joins is claimed like the others; one removed while busy gives its job to another', async () => {
    const shared = memoryRegistry();
    await start([0], { slots: shared.registry, slotRetryMs: 20 });
    const [w0, w1] = s!.workers;
    const e = engineOf(s!);
    models[0].hold();
    models[1].hold();
    const j0 = await submitOk(s!, job(50));
    await until('a job on worker 0', () => runningOn(w0, j0.id), 5000);
    const j1 = await submitOk(s!, job(51));
    e.addServer(w1.url);
    await until('the waiting job on the joined server', () => runningOn(w1, j1.id), 5000);
    expect(shared.slots.get(j1.id)?.worker).toBe(w1.url);
    await e.removeServer(w1.url);
    models[0].open();
    await waitForJob(s!, j1.id, 'succeeded', 5000);
    expect(ran(w0)).toEqual([j0.id, j1.id]);
    expect(shared.max.seen).toBe(1);
    expect(shared.slots.size).toBe(0);
  });
});
