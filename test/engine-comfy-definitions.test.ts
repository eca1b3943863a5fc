// Node definitions come from the workers: /api/object_info lists the union
// of their classes, and submissions are validated against them before any
// worker is called (422 on the v2 surface). Until a worker has answered,
// nothing can be validated: the engine says it is starting, and submissions
// get 429 deployment_not_ready with Retry-After after a short wait.
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import { defineNode } from '../engine/local/define-node.ts';
import { EngineNotReadyError } from '../engine/types.ts';
import { expectCloudError, getJson, postJson } from './helpers/cloud-jobs.ts';
import { assetRef, saveImageWorkflow, submit, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const only = (name: string) =>
  defineNode({
    name,
    category: 'test',
    output_node: true,
    required: { value: ['INT', { default: 1, min: 0, max: 9 }] },
    run: ({ value }) => ({ outputs: [], ui: { text: [String(value)] } }),
  });

/** Requests that reach a worker for a job (not health checks, definitions or the socket). */
const jobCalls = (s: WorkerService) => s.workers.flatMap((w) => w.requests.filter((r) => !/\/(system_stats|object_info|ws)$/.test(r.path)));

describe('node definitions from the workers', () => {
  it("/api/object_info lists every worker's classes, each in the worker's own shape", async () => {
    s = await startWorkerService({ workers: [{ nodes: [only('OnlyOnA')] }, { nodes: [only('OnlyOnB')] }] });
    const [a, b] = await Promise.all(s.workers.map(async (w) => (await fetch(`${w.url}/object_info`)).json() as Promise<Record<string, any>>));
    await until("both workers' definitions", async () => {
      const { body } = await getJson(s!, '/api/object_info');
      return 'OnlyOnA' in body && 'OnlyOnB' in body;
    });
    const { res, body } = await getJson(s, '/api/object_info');
    expect(res.status).toBe(200);
    expect(Object.keys(body).sort()).toEqual([...new Set([...Object.keys(a), ...Object.keys(b)])].sort());
    for (const cls of ['OnlyOnA', 'SaveTextFile', 'FakeSaveFile', 'LoadImage', 'KSampler' in a ? 'KSampler' : 'SaveImage']) {
      expect(body[cls]).toMatchObject({ name: a[cls].name, input: a[cls].input, output: a[cls].output, output_node: a[cls].output_node });
    }
    const one = await getJson(s, '/api/object_info/OnlyOnB');
    expect(one.res.status).toBe(200);
    expect(one.body.OnlyOnB).toMatchObject({ input: b.OnlyOnB.input, category: 'test', output_node: true });
  });

  it('a workflow the definitions refuse is a 422 at v2 submission, before any worker is called', async () => {
    s = await startWorkerService();
    const before = jobCalls(s).length;

    const unknown = await submit(s, { workflow: { x: { class_type: 'NoSuchNode', inputs: {} } } });
    expect(unknown.res.status).toBe(422);
    expect(unknown.body.error).toMatchObject({
      code: 'invalid_workflow',
      details: { reason: 'missing_node_type', node_errors: { x: [expect.objectContaining({ reason: 'missing_node_type' })] } },
    });

    const bad = await submit(s, {
      workflow: { n: { class_type: 'Number', inputs: { value: 500 } }, sh: { class_type: 'Show', inputs: { value: ['n', 0] } } },
    });
    expect(bad.res.status).toBe(422);
    expect(bad.body.error.code).toBe('invalid_workflow');
    expect(bad.body.error.details.node_errors.n).toEqual([expect.objectContaining({ field: 'value', reason: 'value_bigger_than_max' })]);

    const missing = await submit(s, {
      workflow: {
        l: { class_type: 'LoadImage', inputs: { image: assetRef(crypto.randomUUID()) } },
        p: { class_type: 'PreviewImage', inputs: { images: ['l', 0] } },
      },
    });
    expect(missing.res.status).toBe(422);
    expect(missing.body.error.code).toBe('missing_asset');

    const cloud = await postJson(s, '/api/prompt', { prompt: { x: { class_type: 'NoSuchNode', inputs: {} } } });
    expect(cloud.res.status).toBe(400);

    expect(jobCalls(s).length).toBe(before);
    expect(s.workers[0].submissions).toEqual([]);
  });
});

describe('before any worker has answered', () => {
  it('engine: readiness is starting; nodeDefinitions and validate throw EngineNotReadyError after definitionsWaitMs', async () => {
    const engine = createComfyEngine({ workers: ['http://127.0.0.1:1'], definitionsWaitMs: 200, healthIntervalMs: 50, backoffMaxMs: 100 });
    try {
      expect(engine.readiness()).toMatchObject({ state: 'starting', detail: expect.stringContaining('127.0.0.1:1') });
      const t0 = Date.now();
      await expect(engine.nodeDefinitions()).rejects.toBeInstanceOf(EngineNotReadyError);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
      expect(Date.now() - t0).toBeLessThan(2000);
      await expect(engine.validate(saveImageWorkflow())).rejects.toBeInstanceOf(EngineNotReadyError);
      // A worker that never answered is starting, not unavailable.
      expect(engine.readiness().state).toBe('starting');
    } finally {
      await engine.close();
    }
  });

  it('the service answers 429 deployment_not_ready with Retry-After on both surfaces, then runs jobs once the worker answers', async () => {
    s = await startWorkerService({ workers: [{ failures: { blackhole: true } }], waitConnected: false });
    expect(s.engine.readiness().state).toBe('starting');

    const t0 = Date.now();
    const v2 = await submit(s, { workflow: saveImageWorkflow() });
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(v2.res.status).toBe(429);
    expect(v2.body.error).toMatchObject({ code: 'deployment_not_ready', message: expect.any(String) });
    expect(v2.res.headers.get('retry-after')).toMatch(/^\d+$/);

    expectCloudError(await getJson(s, '/api/object_info'), 429, 'deployment_not_ready');
    expect(s.workers[0].submissions).toEqual([]);

    s.workers[0].failures.blackhole = false;
    await until('the engine ready', () => s!.engine.readiness().state === 'ready', 5000);
    const job = await submitOk(s, saveImageWorkflow());
    await waitForJob(s, job.id, 'succeeded', 5000);
  });

  it('the cloud POST /api/prompt answers 429 deployment_not_ready with Retry-After too', async () => {
    s = await startWorkerService({ workers: [{ failures: { blackhole: true } }], waitConnected: false });
    const cloud = await postJson(s, '/api/prompt', { prompt: saveImageWorkflow() });
    expectCloudError(cloud, 429, 'deployment_not_ready');
    expect(cloud.res.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
