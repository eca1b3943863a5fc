// Jobs whose worker misbehaves mid-run: it crashes (the job runs again on
// the other worker, or fails with WorkerLostError), its WebSocket drops (the
// job still completes, found through the worker's /history and /queue), its
// /prompt answers 500 (another worker takes the job), or it never finishes
// (the per-job timeout fails the job with TimeoutError).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import type { FakeWorker } from './fakes/comfyui-worker.ts';
import { expectSameBytes } from './helpers/assets.ts';
import { getJob, saveImageWorkflow, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';
import { connectWs } from './helpers/ws-client.ts';

let s: WorkerService | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const ran = (w: FakeWorker) => w.submissions.map((x) => x.prompt_id);
/** Number -> Wait (steps x ms) -> Show, plus an image saved once the wait is over. */
const slowSave = (steps: number, ms = 50): Workflow => ({
  ...waitWorkflow(7, ms, steps),
  e: { class_type: 'EmptyImage', inputs: { width: 2, height: 2, batch_size: 1, color: ['w2', 0] } },
  s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'slow' } },
});
async function runningOn(id: string): Promise<FakeWorker> {
  await until(
    `${id} running on a worker`,
    () => s!.workers.some((w) => w.queue.running?.item[1] === id && w.queue.running.run.current !== null),
    5000,
  );
  return s!.workers.find((w) => w.queue.running?.item[1] === id)!;
}

describe('a worker that crashes mid-job', () => {
  it('requeue: the job runs again on the other worker and succeeds with its outputs', async () => {
    s = await startWorkerService({ workers: 2 });
    const ws = await connectWs(s.base, { clientId: 'lost' });
    const job = await submitOk(s, slowSave(20));
    const first = await runningOn(job.id);
    const other = s.workers.find((w) => w !== first)!;
    await first.crash();

    const done = await waitForJob(s, job.id, 'succeeded', 10_000);
    expect(ran(first)).toEqual([job.id]);
    expect(ran(other)).toEqual([job.id]);
    expect(done.outputs.map((o: any) => [o.node_id, o.type])).toEqual(
      expect.arrayContaining([
        ['s', 'image'],
        ['w3', 'text'],
      ]),
    );
    const image = done.outputs.find((o: any) => o.node_id === 's');
    expectSameBytes(new Uint8Array(await (await s.fetch(image.url)).arrayBuffer()), s.workerFile(other, 'output', image.name));
    expect(s.log.some((l) => l.message === 'job moved to another worker' && l.detail?.worker === first.url)).toBe(true);
    // The account hears why the job started over.
    const note = await ws.waitFor('notification', (f) => f.kind === 'text' && f.type === 'notification' && f.data.prompt_id === job.id);
    expect((note as any).data.value).toMatch(/lost.*runs again on another worker/);
    await ws.close();
  });

  it('requeue after the first of two SaveImage nodes was committed: the job succeeds with each output once', async () => {
    s = await startWorkerService({ workers: 2 });
    const [first, other] = s.workers;
    // The other worker's counter is further on: the run there names the same image one_00002_.png.
    writeFileSync(join(other.files.dir('output'), 'one_00001_.png'), 'another file');
    const ws = await connectWs(s.base, { clientId: 'requeue' });
    const job = await submitOk(s, {
      e1: { class_type: 'EmptyImage', inputs: { width: 4, height: 3, batch_size: 1, color: 0x102030 } },
      s1: { class_type: 'SaveImage', inputs: { images: ['e1', 0], filename_prefix: 'one' } },
      ...waitWorkflow(8, 50, 20),
      e2: { class_type: 'EmptyImage', inputs: { width: 4, height: 3, batch_size: 1, color: 0x405060 } },
      s2: { class_type: 'SaveImage', inputs: { images: ['e2', 0], filename_prefix: 'two' } },
    });
    await until(
      's1 committed while the job runs on the first worker',
      async () => (await getJob(s!, job.id)).body.outputs.some((o: any) => o.node_id === 's1'),
      5000,
    );
    expect(first.queue.running?.item[1]).toBe(job.id);
    await first.crash();

    const done = await waitForJob(s, job.id, 'succeeded', 10_000);
    expect(ran(other)).toEqual([job.id]);
    expect(s.log.find((l) => l.message === 'job moved to another worker')?.detail?.outputs_committed).toBe(1);
    expect(done.outputs.map((o: any) => o.node_id).sort()).toEqual(['s1', 's2', 'w3']);
    // s1 keeps its first name and asset; the re-run's file (other name, same bytes) is that output.
    const s1 = done.outputs.find((o: any) => o.node_id === 's1');
    expect(s1.name).toBe('one_00001_.png');
    expect((other.queue.history.get(job.id)!.outputs.s1.images as any)[0].filename).toBe('one_00002_.png');
    const bytes = new Uint8Array(await (await s.fetch(s1.url)).arrayBuffer());
    expectSameBytes(bytes, s.workerFile(first, 'output', 'one_00001_.png'));
    expectSameBytes(bytes, s.workerFile(other, 'output', 'one_00002_.png'));
    const s2 = done.outputs.find((o: any) => o.node_id === 's2');
    expectSameBytes(new Uint8Array(await (await s.fetch(s2.url)).arrayBuffer()), s.workerFile(other, 'output', s2.name));
    // /ws showed s1 from both runs under the one content-addressed name.
    await ws.waitFor('the end', (f) => f.kind === 'text' && f.type === 'executing' && f.data.node === null && f.data.prompt_id === job.id);
    const names = ws
      .jobMessages(job.id)
      .filter((m) => m.type === 'executed' && m.data.node === 's1')
      .map((m) => m.data.output.images[0].filename);
    expect(names).toEqual([`${s1.hash.slice('blake3:'.length)}.png`, `${s1.hash.slice('blake3:'.length)}.png`]);
    await ws.close();
  });

  it('fail: the job fails with WorkerLostError and a message naming the worker', async () => {
    s = await startWorkerService({ workers: 2, engine: { onWorkerLost: 'fail' } });
    const job = await submitOk(s, slowSave(20));
    const first = await runningOn(job.id);
    const t0 = Date.now();
    await first.crash();
    const failed = await waitForJob(s, job.id, 'failed', 10_000);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(failed.error).toMatchObject({ code: 'execution_error', exception_type: 'WorkerLostError', node_id: null });
    expect(failed.error.message).toContain(`The worker ${first.url} was lost`);
    expect(failed.outputs).toEqual([]);
    expect(s.workers.flatMap(ran)).toEqual([job.id]);
  });
});

describe('the only worker goes away mid-job and comes back', () => {
  it('restarted (it forgot the job): the job runs again there and succeeds', async () => {
    s = await startWorkerService();
    const [w] = s.workers;
    const job = await submitOk(s, slowSave(20));
    await runningOn(job.id);
    await w.crash();
    await w.accept();
    const done = await waitForJob(s, job.id, 'succeeded', 10_000);
    expect(ran(w)).toEqual([job.id, job.id]);
    expect(s.log.find((l) => l.message === 'job moved to another worker')?.detail?.error).toMatch(/no longer knows the job/);
    expect(done.outputs.map((o: any) => o.node_id).sort()).toEqual(['s', 'w3']);
  });

  it('cut off past workerLostAfterMs (it kept the job): the run it kept is followed, not started twice', async () => {
    s = await startWorkerService();
    const [w] = s.workers;
    const job = await submitOk(s, slowSave(20));
    await runningOn(job.id);
    await w.refuse();
    await until('the job counted lost', () => s!.log.some((l) => l.message === 'job moved to another worker'), 5000);
    await w.accept();
    const done = await waitForJob(s, job.id, 'succeeded', 10_000);
    expect(ran(w)).toEqual([job.id]);
    expect(w.queue.history.get(job.id)?.status.status_str).toBe('success');
    const image = done.outputs.find((o: any) => o.node_id === 's');
    expectSameBytes(new Uint8Array(await (await s.fetch(image.url)).arrayBuffer()), s.workerFile(w, 'output', image.name));
  });
});

describe("the worker's WebSocket drops mid-job", () => {
  it.each([
    ['reconnects', false],
    ['cannot reconnect', true],
  ])('the job still completes with its outputs (socket %s)', async (_, refuse) => {
    s = await startWorkerService();
    const w = s.workers[0];
    const ws = await connectWs(s.base, { clientId: 'drop' });
    w.failures.dropWebSocketsAfter = 4;
    w.failures.refuseWebSockets = refuse;
    const job = await submitOk(s, slowSave(6));
    const done = await waitForJob(s, job.id, 'succeeded', 10_000);
    expect(w.failures.dropWebSocketsAfter).toBeNull();
    // The end was found by asking the worker: its history, and its queue.
    const asked = w.requests.map((r) => `${r.method} ${r.path.replace(/^\/api(?=\/)/, '')}`);
    expect(asked).toContain(`GET /history/${job.id}`);
    if (refuse) {
      // Nothing after the drop reached the engine: the end was only ever seen through those.
      expect(w.sent.some((f) => f.type === 'execution_success' && f.data?.prompt_id === job.id)).toBe(false);
      expect(asked).toContain('GET /queue');
    }
    const image = done.outputs.find((o: any) => o.node_id === 's');
    expect(image).toMatchObject({ type: 'image', content_type: 'image/png' });
    expectSameBytes(new Uint8Array(await (await s.fetch(image.url)).arrayBuffer()), s.workerFile(w, 'output', image.name));
    expect(done.outputs.map((o: any) => o.node_id).sort()).toEqual(['s', 'w3']);
    // What the socket missed, the history told: /ws still shows each output node's executed.
    await ws.waitFor('the end', (f) => f.kind === 'text' && f.type === 'executing' && f.data.node === null && f.data.prompt_id === job.id);
    const executed = ws
      .jobMessages(job.id)
      .filter((m) => m.type === 'executed')
      .map((m) => m.data.node);
    expect(executed.sort()).toEqual(['s', 'w3']);
    await ws.close();
  });
});

describe('a worker answering 500 to /prompt', () => {
  it('the job goes to the other worker', async () => {
    s = await startWorkerService({ workers: 2 });
    const [bad, good] = s.workers;
    bad.failures.routes.push({ route: 'POST /prompt', status: 500 });
    const job = await submitOk(s, saveImageWorkflow(0x445566));
    const done = await waitForJob(s, job.id, 'succeeded', 5000);
    expect(bad.requests.some((r) => r.method === 'POST' && r.path === '/prompt')).toBe(true);
    expect(ran(good)).toEqual([job.id]);
    expect(done.outputs).toHaveLength(1);
  });

  it('with one worker that keeps answering 500, the job fails with WorkerLostError after its retries', async () => {
    s = await startWorkerService({ engine: { maxRequeues: 2 } });
    const [w] = s.workers;
    w.failures.routes.push({ route: 'POST /prompt', status: 500 });
    const job = await submitOk(s, saveImageWorkflow(0x556677));
    const failed = await waitForJob(s, job.id, 'failed', 5000);
    expect(failed.error).toMatchObject({ exception_type: 'WorkerLostError' });
    expect(failed.error.message).toMatch(/submit: the worker answered 500/);
    expect(w.requests.filter((r) => r.method === 'POST' && r.path === '/prompt')).toHaveLength(3);
  });

  it('a single 500 is retried on the same worker when it is the only one', async () => {
    s = await startWorkerService();
    const [w] = s.workers;
    w.failures.routes.push({ route: 'POST /prompt', status: 500, times: 1 });
    const job = await submitOk(s, saveImageWorkflow(0x667788));
    await waitForJob(s, job.id, 'succeeded', 5000);
    expect(w.requests.filter((r) => r.method === 'POST' && r.path === '/prompt')).toHaveLength(2);
    expect(ran(w)).toEqual([job.id]);
  });
});

describe('a worker that never finishes', () => {
  it('jobTimeoutMs fails the job with TimeoutError and asks the worker to cancel it', async () => {
    s = await startWorkerService({ engine: { jobTimeoutMs: 600 } });
    const [w] = s.workers;
    w.failures.hang = 'stuck';
    const job = await submitOk(s, saveImageWorkflow(0x778899));
    const t0 = Date.now();
    const failed = await waitForJob(s, job.id, 'failed', 5000);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(failed.error).toMatchObject({ code: 'execution_error', exception_type: 'TimeoutError', node_id: null });
    expect(failed.error.message).toBe('The job did not finish on the worker within 600 ms.');
    await until('the cancel sent', () => w.requests.some((r) => r.method === 'POST' && r.path === `/api/jobs/${job.id}/cancel`));
    // Wedged: the worker still holds it.
    expect(w.queue.running?.item[1]).toBe(job.id);
  });

  it('the stuck worker gets no job after the timeout, even with free slots, until its prompt is gone; then it is used again', async () => {
    s = await startWorkerService({ workers: 2, engine: { jobTimeoutMs: 800, perWorker: 2 } });
    const [stuck, good] = s.workers;
    stuck.failures.hang = 'stuck';
    const job = await submitOk(s, saveImageWorkflow(0x010101));
    expect((await waitForJob(s, job.id, 'failed', 5000)).error.exception_type).toBe('TimeoutError');
    expect(ran(stuck)).toEqual([job.id]);

    // Two jobs at once: each would find a free slot on either worker, yet both go to the good one.
    const next = [await submitOk(s, saveImageWorkflow(0x020202)), await submitOk(s, saveImageWorkflow(0x030303))];
    for (const j of next) await waitForJob(s, j.id, 'succeeded', 5000);
    expect(ran(good)).toEqual(next.map((j) => j.id));
    expect(ran(stuck)).toEqual([job.id]);
    // The health loop keeps asking its queue, and says why the worker is left out.
    await until(
      'the engine saw the prompt linger',
      () => s!.log.some((l) => l.message === 'worker still runs a canceled prompt; it gets no job until it lets go'),
      5000,
    );
    expect(stuck.queue.running?.item[1]).toBe(job.id);

    // The GPU comes back and honours the interrupt: the worker takes jobs again.
    stuck.unstick();
    await until(
      'the engine saw the prompt go',
      () => s!.log.some((l) => l.message === 'worker let go of the canceled prompt' && l.detail?.worker === stuck.url),
      5000,
    );
    const again = await submitOk(s, saveImageWorkflow(0x040404));
    await waitForJob(s, again.id, 'succeeded', 5000);
    expect(ran(stuck)).toEqual([job.id, again.id]);
  });
});

describe('a worker whose /history hangs', () => {
  it('the cross-check times out and is tried again: the job still completes', async () => {
    s = await startWorkerService({ engine: { requestTimeoutMs: 300 } });
    const [w] = s.workers;
    // A dropped socket: only the history can say how the job ended.
    w.failures.dropWebSocketsAfter = 3;
    w.failures.routes.push({ route: 'GET /history', hang: true, times: 1 });
    const job = await submitOk(s, saveImageWorkflow(0x0a0b0c));
    const done = await waitForJob(s, job.id, 'succeeded', 5000);
    expect(done.outputs).toHaveLength(1);
    expect(w.requests.filter((r) => r.path.startsWith('/history/')).length).toBeGreaterThanOrEqual(2);
  });
});
