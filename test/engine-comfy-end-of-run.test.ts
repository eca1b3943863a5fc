// How the worker engine learns that a job ended and what it made. When its
// socket to the worker was up from the submit to the end, the messages told
// it everything (each output node's `executed`, then `execution_success`), so
// it asks the worker's /history for nothing. When they may have missed
// something, the history fills it in: a dropped socket (engine-comfy-lost),
// or a cached output node that an older worker reported only in
// `execution_cached`.
import { afterEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import { expectSameBytes } from './helpers/assets.ts';
import { submitOk, waitForJob } from './helpers/jobs.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** Two output nodes: a saved image and a shown number (text output), off one source. */
const workflow = (color: number): Workflow => ({
  e: { class_type: 'EmptyImage', inputs: { width: 4, height: 3, batch_size: 1, color } },
  si: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'end' } },
  n: { class_type: 'Number', inputs: { value: 7 } },
  sh: { class_type: 'Show', inputs: { value: ['n', 0] } },
});

const historyAsked = (h: WorkerService, id: string) => h.workers[0].requests.filter((r) => r.path.endsWith(`/history/${id}`)).length;

/** The job's outputs as [node, name], and each image's bytes checked against the worker's file. */
async function outputsOf(h: WorkerService, job: any): Promise<string[][]> {
  for (const o of job.outputs.filter((x: any) => x.type === 'image')) {
    expectSameBytes(new Uint8Array(await (await h.fetch(o.url)).arrayBuffer()), h.workerFile(h.workers[0], 'output', o.name));
  }
  return job.outputs.map((o: any) => [o.node_id, o.name]).sort();
}

describe('the end of a worker job', () => {
  it('every message heard: the job succeeds with its outputs, and the worker is not asked for its history', async () => {
    s = await startWorkerService();
    const job = await submitOk(s, workflow(0x112233));
    const done = await waitForJob(s, job.id, 'succeeded', 10_000);
    expect(await outputsOf(s, done)).toEqual([
      ['sh', 'text_sh_0.txt'],
      ['si', 'end_00001_.png'],
    ]);
    expect(historyAsked(s, job.id)).toBe(0);
  });

  it("a run served from the worker's cache: its output nodes are re-sent `executed`, so the history is not needed either", async () => {
    s = await startWorkerService();
    const first = await waitForJob(s, (await submitOk(s, workflow(0x445566))).id, 'succeeded', 10_000);
    const again = await submitOk(s, workflow(0x445566));
    const done = await waitForJob(s, again.id, 'succeeded', 10_000);
    expect(s.workers[0].sent.find((f) => f.type === 'execution_cached' && f.data?.prompt_id === again.id)?.data?.nodes).toEqual(
      expect.arrayContaining(['si', 'sh']),
    );
    expect(await outputsOf(s, done)).toEqual(await outputsOf(s, first));
    expect(historyAsked(s, again.id)).toBe(0);
  });

  it('an older worker that reports cached output nodes only in `execution_cached`: their files come from its history', async () => {
    s = await startWorkerService();
    const [w] = s.workers;
    w.failures.cachedExecuted = false;
    const first = await waitForJob(s, (await submitOk(s, workflow(0x778899))).id, 'succeeded', 10_000);
    expect(historyAsked(s, first.id)).toBe(0);
    const again = await submitOk(s, workflow(0x778899));
    const done = await waitForJob(s, again.id, 'succeeded', 10_000);
    // The worker sent no `executed` for this run: the outputs are the history's.
    expect(w.sent.filter((f) => f.type === 'executed' && f.data?.prompt_id === again.id)).toEqual([]);
    expect(historyAsked(s, again.id)).toBeGreaterThanOrEqual(1);
    expect(await outputsOf(s, done)).toEqual(await outputsOf(s, first));
  });
});
