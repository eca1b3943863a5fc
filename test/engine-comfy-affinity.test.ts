// Model-affinity routing through the service, on two fake workers with model
// loaders (fakes/comfyui-model-nodes.ts): a job goes to the free worker that
// ran its models last; with no holder, to the least loaded one; a job whose
// holder is busy waits for it, but no longer than affinityWaitMs while
// another is free, and not at all with routing 'least-loaded'; what a worker
// holds is forgotten when it restarts and bounded per worker (LRU). Also the
// loader table and the generic rule of model-loaders.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { ComfyEngine, ComfyEngineOptions } from '../engine/comfyui/engine.ts';
import { modelsOf } from '../engine/comfyui/model-loaders.ts';
import { createModelMemory } from '../engine/comfyui/model-memory.ts';
import type { NodeDefinition } from '../engine/types.ts';
import { createModelNodes, type ModelNodes, modelWorkflow } from './fakes/comfyui-model-nodes.ts';
import type { FakeWorker } from './fakes/comfyui-worker.ts';
import { jobNow, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const CKPTS = ['a.safetensors', 'b.safetensors', 'c.safetensors', 'd.safetensors'];
let models: ModelNodes[] = [];
async function start(engine: Partial<ComfyEngineOptions> = {}, n = 2): Promise<WorkerService> {
  models = Array.from({ length: n }, () => createModelNodes({ checkpoints: CKPTS }));
  s = await startWorkerService({ workers: models.map((m) => ({ nodes: m.nodes })), engine });
  return s;
}
const ran = (w: FakeWorker) => w.submissions.map((x) => x.prompt_id);
const engineOf = (svc: WorkerService) => svc.engine as ComfyEngine;
const heldOn = (svc: WorkerService, w: FakeWorker) =>
  engineOf(svc)
    .servers()
    .find((x) => x.url === w.url)?.models ?? [];

/** Worker 1 (second in order, so never chosen by the tie rule) ends up holding `ckpt`: worker 0 is kept busy meanwhile. */
async function holdOnSecond(svc: WorkerService, ckpt: string, seed: number): Promise<void> {
  const [w0, w1] = svc.workers;
  models[0].hold();
  const busy = await submitOk(svc, modelWorkflow('d.safetensors', seed));
  await until('the busy job on worker 0', () => w0.queue.running?.item[1] === busy.id, 5000);
  const job = await submitOk(svc, modelWorkflow(ckpt, seed + 1));
  await waitForJob(svc, job.id, 'succeeded', 5000);
  expect(ran(w1)).toContain(job.id);
  models[0].open();
  await waitForJob(svc, busy.id, 'succeeded', 5000);
  expect(heldOn(svc, w1)).toEqual([`checkpoints/${ckpt}`]);
}

describe('model-affinity routing', () => {
  it('a job goes to the free worker holding its model, not the first in order', async () => {
    await start({ affinityWaitMs: 60_000 });
    const [w0, w1] = s!.workers;
    await holdOnSecond(s!, 'a.safetensors', 1);
    const a = await submitOk(s!, modelWorkflow('a.safetensors', 10));
    await waitForJob(s!, a.id, 'succeeded', 5000);
    expect(ran(w1)).toContain(a.id);
    // Worker 0 holds d (its busy job's); b is held by nobody: the least loaded, the first in order.
    const b = await submitOk(s!, modelWorkflow('b.safetensors', 11));
    await waitForJob(s!, b.id, 'succeeded', 5000);
    expect(ran(w0)).toContain(b.id);
    expect(heldOn(s!, w0)).toEqual(['checkpoints/d.safetensors', 'checkpoints/b.safetensors']);
    // The worker loaded a once: the second job found it in memory.
    expect(models[1].loads).toEqual(['checkpoints/a.safetensors']);
  });

  it('a job whose holder is busy waits for it while another worker is free and runs jobs', async () => {
    await start({ affinityWaitMs: 60_000 });
    const [w0, w1] = s!.workers;
    await holdOnSecond(s!, 'a.safetensors', 20);
    models[1].hold();
    const first = await submitOk(s!, modelWorkflow('a.safetensors', 22));
    await until('the holder busy', () => w1.queue.running?.item[1] === first.id, 5000);
    const waiting = await submitOk(s!, modelWorkflow('a.safetensors', 23));
    const other = await submitOk(s!, modelWorkflow('c.safetensors', 24));
    // The free worker runs the job behind it, not the waiting one.
    await waitForJob(s!, other.id, 'succeeded', 5000);
    expect(ran(w0)).toContain(other.id);
    expect(ran(w0)).not.toContain(waiting.id);
    expect(['queued', 'running']).toContain((await jobNow(s!, waiting.id)).status);
    models[1].open();
    await waitForJob(s!, waiting.id, 'succeeded', 5000);
    expect(ran(w1)).toContain(waiting.id);
  });

  it('a waiting job that would load leaves a freed worker to a waiting job that holds all its models there', async () => {
    await start({ affinityWaitMs: 60_000 }, 1);
    const [w] = s!.workers;
    models[0].hold();
    const first = await submitOk(s!, modelWorkflow('a.safetensors', 25));
    await until('the worker busy', () => w.queue.running?.item[1] === first.id, 5000);
    const loads = await submitOk(s!, modelWorkflow('c.safetensors', 26));
    const holds = await submitOk(s!, modelWorkflow('a.safetensors', 27));
    await until('both waiting', () => engineOf(s!).servers()[0].busy === 1 && w.submissions.length === 1, 5000);
    models[0].open();
    await waitForJob(s!, loads.id, 'succeeded', 5000);
    // The later job went first: the worker held its checkpoint.
    expect(ran(w)).toEqual([first.id, holds.id, loads.id]);
  });

  it('no job waits for a busy holder longer than affinityWaitMs when a worker is free', async () => {
    await start({ affinityWaitMs: 200 });
    const [w0, w1] = s!.workers;
    await holdOnSecond(s!, 'a.safetensors', 30);
    models[1].hold();
    const first = await submitOk(s!, modelWorkflow('a.safetensors', 31));
    await until('the holder busy', () => w1.queue.running?.item[1] === first.id, 5000);
    const t0 = Date.now();
    const job = await submitOk(s!, modelWorkflow('a.safetensors', 32));
    await waitForJob(s!, job.id, 'succeeded', 10_000);
    // Its holder still runs the first job: the bound sent it to the free worker.
    expect(ran(w0)).toContain(job.id);
    expect(w1.queue.running?.item[1]).toBe(first.id);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
    models[1].open();
    await waitForJob(s!, first.id, 'succeeded', 5000);
  });

  it("routing 'least-loaded' does not wait for the holder", async () => {
    await start({ routing: 'least-loaded', affinityWaitMs: 60_000 });
    const [w0, w1] = s!.workers;
    // Worker 0 busy, so the first job of a goes to worker 1 and stays there (its gate held).
    models[0].hold();
    models[1].hold();
    const d = await submitOk(s!, modelWorkflow('d.safetensors', 40));
    await until('worker 0 busy', () => w0.queue.running?.item[1] === d.id, 5000);
    const first = await submitOk(s!, modelWorkflow('a.safetensors', 41));
    await until('worker 1 busy', () => w1.queue.running?.item[1] === first.id, 5000);
    models[0].open();
    await waitForJob(s!, d.id, 'succeeded', 5000);
    const job = await submitOk(s!, modelWorkflow('a.safetensors', 42));
    await waitForJob(s!, job.id, 'succeeded', 5000);
    expect(ran(w0)).toContain(job.id);
    expect(w1.queue.running?.item[1]).toBe(first.id);
    models[1].open();
    await waitForJob(s!, first.id, 'succeeded', 5000);
  });

  it('a worker that restarted has forgotten its models', async () => {
    await start({ affinityWaitMs: 60_000 });
    const [w0, w1] = s!.workers;
    await holdOnSecond(s!, 'a.safetensors', 50);
    // Both restart (worker 0 held d): with nothing held anywhere, the first in order takes the job.
    await Promise.all([w0.crash(), w1.crash()]);
    await until('the engine saw both go', () => heldOn(s!, w0).length + heldOn(s!, w1).length === 0, 5000);
    await Promise.all([w0.accept(), w1.accept()]);
    await until(
      'worker 1 back',
      () =>
        engineOf(s!)
          .servers()
          .every((x) => x.healthy),
      5000,
    );
    await s!.connected();
    const a = await submitOk(s!, modelWorkflow('a.safetensors', 51));
    await waitForJob(s!, a.id, 'succeeded', 5000);
    // Nobody holds a now: the first in order took it.
    expect(ran(w0)).toContain(a.id);
  });

  it('what a worker holds is bounded by modelsPerServer, the least recently used forgotten first', async () => {
    await start({ modelsPerServer: 2 }, 1);
    for (const [i, c] of ['a', 'b', 'a', 'c'].entries()) {
      const job = await submitOk(s!, modelWorkflow(`${c}.safetensors`, 60 + i));
      await waitForJob(s!, job.id, 'succeeded', 5000);
    }
    expect(heldOn(s!, s!.workers[0])).toEqual(['checkpoints/a.safetensors', 'checkpoints/c.safetensors']);
  });
});

describe('which models a workflow loads', () => {
  const combo = (name: string, input: string, options: string[]): NodeDefinition =>
    ({ name, input: { required: { [input]: [options, {}] } } }) as unknown as NodeDefinition;

  it('reads the loaders of the table, one entry per model, links ignored', () => {
    const wf = {
      1: { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'sd.safetensors' } },
      2: { class_type: 'LoraLoader', inputs: { model: ['1', 0], clip: ['1', 1], lora_name: 'style.safetensors', strength_model: 1 } },
      3: { class_type: 'DualCLIPLoader', inputs: { clip_name1: 't5.safetensors', clip_name2: 'l.safetensors', type: 'flux' } },
      4: { class_type: 'UNETLoader', inputs: { unet_name: 'flux.safetensors', weight_dtype: 'default' } },
      5: { class_type: 'VAELoader', inputs: { vae_name: 'ae.safetensors' } },
      6: { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'sd.safetensors' } },
      7: { class_type: 'UpscaleModelLoader', inputs: { model_name: 'x4.pth' } },
      8: { class_type: 'ControlNetLoader', inputs: { control_net_name: 'canny.safetensors' } },
    };
    expect(modelsOf(wf).sort()).toEqual(
      [
        'checkpoints/sd.safetensors',
        'loras/style.safetensors',
        'text_encoders/t5.safetensors',
        'text_encoders/l.safetensors',
        'diffusion_models/flux.safetensors',
        'vae/ae.safetensors',
        'upscale_models/x4.pth',
        'controlnet/canny.safetensors',
      ].sort(),
    );
  });

  it('a custom loader counts when its input is a combo of model files; other combos do not', () => {
    const defs = {
      MyLoader: combo('MyLoader', 'weights', ['m1.gguf', 'm2.gguf']),
      LoadImage: combo('LoadImage', 'image', ['cat.png']),
    };
    const wf = {
      1: { class_type: 'MyLoader', inputs: { weights: 'm2.gguf' } },
      2: { class_type: 'LoadImage', inputs: { image: 'cat.png' } },
      3: { class_type: 'MyLoader', inputs: { weights: 'other.gguf' } },
    };
    expect(modelsOf(wf, defs)).toEqual(['weights/m2.gguf']);
  });

  it('the memory keeps the most recently used, up to its limit', () => {
    const m = createModelMemory(2);
    m.use(['a', 'b']);
    m.use(['a']);
    m.use(['c']);
    expect(m.list()).toEqual(['a', 'c']);
    m.forget();
    expect(m.list()).toEqual([]);
  });
});
