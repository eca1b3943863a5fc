// The warm-up workflow (engine option `warmup`) on fake workers with model
// loaders: it runs on a server when it joins, before its first job, the
// server counting as warming (not free, the engine not ready) meanwhile, and
// its loaders counting as models the server holds; it runs again after the
// server restarted; a warm-up that fails is logged and the server takes jobs
// anyway.
import { afterEach, describe, expect, it } from 'vitest';
import type { ComfyEngine, ComfyEngineOptions } from '../engine/comfyui/engine.ts';
import { createModelNodes, type ModelNodes, modelWorkflow } from './fakes/comfyui-model-nodes.ts';
import { submitOk, until, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService | undefined;
let m: ModelNodes;
afterEach(async () => {
  m?.open();
  await s?.close();
  s = undefined;
});

async function start(engine: Partial<ComfyEngineOptions>): Promise<WorkerService> {
  m = createModelNodes({ checkpoints: ['a.safetensors', 'b.safetensors'] });
  s = await startWorkerService({ workers: [{ nodes: m.nodes }], waitConnected: false, engine });
  return s;
}
const engineOf = (svc: WorkerService) => svc.engine as ComfyEngine;
const warmups = (svc: WorkerService) => svc.workers[0].submissions.filter((x) => x.prompt_id.startsWith('warmup-'));

describe('warm-up', () => {
  it('runs on a server that joins before its first job; it is warming meanwhile; its models count as held', async () => {
    m = createModelNodes({ checkpoints: ['a.safetensors', 'b.safetensors'] });
    m.hold();
    s = await startWorkerService({
      workers: [{ nodes: m.nodes }],
      waitConnected: false,
      engine: { workers: [], warmup: modelWorkflow('a.safetensors', 0) },
    });
    const e = engineOf(s);
    const [w] = s.workers;
    e.addServer(w.url);
    await until('the warm-up running', () => w.queue.running?.item[1]?.startsWith('warmup-') === true, 5000);
    expect(e.servers()).toMatchObject([{ warming: true, healthy: true }]);
    expect(e.readiness()).toEqual({ state: 'starting', detail: expect.stringMatching(/warming/), queuesJobs: true });
    const job = await submitOk(s, modelWorkflow('a.safetensors', 1));
    m.open();
    await waitForJob(s, job.id, 'succeeded', 5000);
    expect(w.submissions.map((x) => x.prompt_id)).toEqual([warmups(s)[0].prompt_id, job.id]);
    expect(e.servers()).toMatchObject([{ warming: false, models: ['checkpoints/a.safetensors'] }]);
    // The job found its checkpoint in memory: loaded once, by the warm-up.
    expect(m.loads).toEqual(['checkpoints/a.safetensors']);
    expect(s.log.some((l) => l.message === 'worker warmed up')).toBe(true);
  });

  it('runs again after the server restarted', async () => {
    await start({ warmup: modelWorkflow('a.safetensors', 0) });
    const [w] = s!.workers;
    const e = engineOf(s!);
    await until('warmed up', () => e.readiness().state === 'ready', 5000);
    expect(warmups(s!)).toHaveLength(1);
    await w.crash();
    m.forget();
    await until('the engine saw it go', () => !e.servers()[0].healthy, 5000);
    await w.accept();
    await until('warmed up again', () => warmups(s!).length === 2 && e.readiness().state === 'ready', 5000);
    expect(e.servers()[0].models).toEqual(['checkpoints/a.safetensors']);
    const job = await submitOk(s!, modelWorkflow('b.safetensors', 2));
    await waitForJob(s!, job.id, 'succeeded', 5000);
    expect(w.submissions.at(-1)?.prompt_id).toBe(job.id);
  });

  it('a warm-up that fails is logged and the server takes jobs anyway', async () => {
    // A checkpoint the server does not have: it refuses the prompt.
    await start({ warmup: modelWorkflow('missing.safetensors', 0) });
    const e = engineOf(s!);
    await until('the failure logged', () => s!.log.some((l) => l.message === 'warm-up failed; the worker takes jobs anyway'), 5000);
    await until('ready', () => e.readiness().state === 'ready', 5000);
    expect(e.servers()[0].models).toEqual([]);
    const job = await submitOk(s!, modelWorkflow('a.safetensors', 3));
    await waitForJob(s!, job.id, 'succeeded', 5000);
  });
});
