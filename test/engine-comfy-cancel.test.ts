// Canceling a job that runs on a worker: the worker's per-job cancel route
// when it has one, else a queue delete plus an interrupt naming the prompt;
// a prompt still pending on the worker is only deleted from its queue (the
// prompt the worker runs for someone else goes on). The job ends canceled
// and the worker's slot is free again for the next job.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeWorker } from './fakes/comfyui-worker.ts';
import { postJson } from './helpers/cloud-jobs.ts';
import { cancelJob, saveImageWorkflow, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService;
let w: FakeWorker;
beforeEach(async () => {
  s = await startWorkerService();
  w = s.workers[0];
});
afterEach(async () => {
  await s.close();
});

/** Requests the engine made to the worker after `from`, as "METHOD path" without the /api prefix. */
const requestsSince = (from: number) => w.requests.slice(from).map((r) => `${r.method} ${r.path.replace(/^\/api(?=\/)/, '')}`);
const running = (id: string) =>
  until(`${id} running on the worker`, () => w.queue.running?.item[1] === id && (w.queue.running?.run.current ?? null) !== null, 5000);
/** A long prompt submitted to the worker directly, as another client of it would. */
async function foreignPrompt(): Promise<string> {
  const res = await fetch(`${w.url}/prompt`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: waitWorkflow(3, 50, 400), client_id: 'someone-else' }),
  });
  expect(res.status).toBe(200);
  const { prompt_id } = (await res.json()) as { prompt_id: string };
  await running(prompt_id);
  return prompt_id;
}
const interruptedOnWorker = (id: string) => {
  const entry = w.queue.history.get(id);
  return entry?.status.status_str === 'error' && entry.status.messages.some(([type]) => type === 'execution_interrupted');
};

/** The next job runs on the worker as soon as the canceled prompt is gone, and never alongside it. */
async function nextJobRuns(canceled: string) {
  let overlapped = false;
  const push = w.submissions.push.bind(w.submissions);
  w.submissions.push = (...items) => {
    if (w.queue.running?.item[1] === canceled || w.queue.pending.some((p) => p.item[1] === canceled)) overlapped = true;
    return push(...items);
  };
  const next = await submitOk(s, saveImageWorkflow(0x010203));
  await waitForJob(s, next.id, 'succeeded', 5000);
  expect(overlapped).toBe(false);
  expect(w.submissions.at(-1)!.prompt_id).toBe(next.id);
}

describe('cancel of a job running on the worker', () => {
  it("uses the worker's per-job cancel route; the job ends canceled and the slot is freed", async () => {
    const job = await submitOk(s, waitWorkflow(1, 50, 400));
    await running(job.id);
    const mark = w.requests.length;
    const { res, body } = await cancelJob(s, job.id);
    expect(res.status).toBe(200);
    expect(['canceling', 'canceled']).toContain(body.status);
    const ended = await waitForJob(s, job.id, 'canceled', 5000);
    expect(ended.error).toBeNull();
    await until('the worker interrupted the prompt', () => interruptedOnWorker(job.id));
    const calls = requestsSince(mark);
    expect(calls).toContain(`POST /jobs/${job.id}/cancel`);
    expect(calls).not.toContain('POST /interrupt');
    expect(calls).not.toContain('POST /queue');
    await nextJobRuns(job.id);
  });

  it('without the route (404): queue delete, then /interrupt naming the prompt; canceled, slot freed', async () => {
    w.failures.jobCancelRoute = false;
    const job = await submitOk(s, waitWorkflow(2, 50, 400));
    await running(job.id);
    const mark = w.requests.length;
    await cancelJob(s, job.id);
    await waitForJob(s, job.id, 'canceled', 5000);
    await until('the worker interrupted the prompt', () => interruptedOnWorker(job.id));
    const calls = requestsSince(mark).filter((c) => !c.startsWith('GET /system_stats'));
    const order = ['POST /jobs/', 'POST /queue', 'POST /interrupt'].map((p) => calls.findIndex((c) => c.startsWith(p)));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(w.interrupts).toEqual([{ prompt_id: job.id }]);
    await nextJobRuns(job.id);
  });

  it('through the cloud surface: POST /api/interrupt cancels the running job the same way', async () => {
    const job = await submitOk(s, waitWorkflow(3, 50, 400));
    await running(job.id);
    const r = await postJson(s, '/api/interrupt', {});
    expect(r.res.status).toBe(200);
    await waitForJob(s, job.id, 'canceled', 5000);
    await until('the worker interrupted the prompt', () => interruptedOnWorker(job.id));
    expect(requestsSince(0)).toContain(`POST /jobs/${job.id}/cancel`);
  });
});

describe('cancel of a job still pending on the worker', () => {
  it.each([true, false])("deletes it from the worker queue (cancel route %s); the worker's running prompt goes on", async (route) => {
    w.failures.jobCancelRoute = route;
    const other = await foreignPrompt();
    const job = await submitOk(s, saveImageWorkflow(0x445566));
    await until('the job pending on the worker', () => w.queue.pending.some((p) => p.item[1] === job.id), 5000);
    await waitForJob(s, job.id, 'running');

    const mark = w.requests.length;
    await cancelJob(s, job.id);
    await waitForJob(s, job.id, 'canceled', 5000);
    await until('the prompt left the worker queue', () => !w.queue.pending.some((p) => p.item[1] === job.id));
    expect(w.queue.running?.item[1]).toBe(other);
    expect(w.interrupts).toEqual([]);
    const calls = requestsSince(mark);
    if (route) expect(calls).toContain(`POST /jobs/${job.id}/cancel`);
    else expect(calls).toContain('POST /queue');

    // Once the worker is free, the next job runs and the canceled one never did.
    const next = await submitOk(s, saveImageWorkflow(0x778899));
    await until('the next job pending on the worker', () => w.queue.pending.some((p) => p.item[1] === next.id), 5000);
    await fetch(`${w.url}/interrupt`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt_id: other }),
    });
    await waitForJob(s, next.id, 'succeeded', 5000);
    expect(w.queue.history.has(job.id)).toBe(false);
    expect(w.submissions.map((x) => x.prompt_id)).toEqual([other, job.id, next.id]);
  });
});

describe('cancel of a job waiting for a worker slot', () => {
  it('ends canceled without ever reaching the worker', async () => {
    const busy = await submitOk(s, waitWorkflow(5, 50, 400));
    await running(busy.id);
    const waiting = await submitOk(s, saveImageWorkflow(0x998877));
    await waitForJob(s, waiting.id, 'running');
    const mark = w.requests.length;
    await cancelJob(s, waiting.id);
    await waitForJob(s, waiting.id, 'canceled', 5000);
    expect(w.submissions.map((x) => x.prompt_id)).toEqual([busy.id]);
    expect(requestsSince(mark).filter((c) => c.startsWith('POST'))).toEqual([]);
    expect(w.queue.running?.item[1]).toBe(busy.id);
    await cancelJob(s, busy.id);
    await waitForJob(s, busy.id, 'canceled', 5000);
  });
});
