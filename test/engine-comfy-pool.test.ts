// The worker pool through the service: jobs spread over the workers (the
// least loaded first), never two at once on a worker with one slot; a worker
// that refuses connections gets no job and is used again once it answers
// (health checks with backoff); a job whose node class only some workers
// have waits for one of those.
import { afterEach, describe, expect, it } from 'vitest';
import { defineNode } from '../engine/local/define-node.ts';
import type { FakeWorker } from './fakes/comfyui-worker.ts';
import { saveImageWorkflow, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { startWorkerService, type WorkerService } from './helpers/worker-service.ts';

let s: WorkerService | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** Records, at each prompt a worker accepts, whether it already had one queued or running (it must not). */
function watchOverlap(workers: FakeWorker[]): { overlaps: string[] } {
  const seen = { overlaps: [] as string[] };
  for (const w of workers) {
    const push = w.submissions.push.bind(w.submissions);
    w.submissions.push = (...items) => {
      if (w.queue.remaining() > 0) seen.overlaps.push(`${w.url}: ${items[0].prompt_id}`);
      return push(...items);
    };
  }
  return seen;
}
const ran = (w: FakeWorker) => w.submissions.map((x) => x.prompt_id);

describe('spreading jobs', () => {
  it('two workers, one slot each: both are used, never two jobs at once on one', async () => {
    s = await startWorkerService({ workers: 2 });
    const seen = watchOverlap(s.workers);
    const jobs = [];
    for (let i = 0; i < 6; i++) jobs.push(await submitOk(s, waitWorkflow(i, 30, 3)));
    // Two run at once: one per worker.
    await until('a job on each worker', () => s!.workers.every((w) => w.queue.running !== null), 5000);
    for (const j of jobs) await waitForJob(s, j.id, 'succeeded', 10_000);

    expect(seen.overlaps).toEqual([]);
    const [a, b] = s.workers.map(ran);
    expect(a.length).toBeGreaterThanOrEqual(1);
    expect(b.length).toBeGreaterThanOrEqual(1);
    expect([...a, ...b].sort()).toEqual(jobs.map((j) => j.id).sort());
  });

  it('a busy worker gets no job while another is free', async () => {
    s = await startWorkerService({ workers: 2 });
    const long = await submitOk(s, waitWorkflow(1, 50, 40));
    await until('the long job running', () => s!.workers.some((w) => w.queue.running?.item[1] === long.id), 5000);
    const busy = s.workers.find((w) => w.queue.running?.item[1] === long.id)!;
    const idle = s.workers.find((w) => w !== busy)!;
    const quick = [];
    for (let i = 0; i < 3; i++) quick.push(await waitForJob(s, (await submitOk(s, saveImageWorkflow(0x100000 + i))).id, 'succeeded', 5000));
    expect(ran(idle)).toEqual(quick.map((j) => j.id));
    expect(ran(busy)).toEqual([long.id]);
    await waitForJob(s, long.id, 'succeeded', 10_000);
  });

  it('with two slots per worker, the least-loaded worker is chosen over a free slot on a loaded one', async () => {
    s = await startWorkerService({ workers: 2, engine: { perWorker: 2 } });
    const a = await submitOk(s, waitWorkflow(2, 50, 10));
    await until('the first job on a worker', () => s!.workers.some((w) => w.queue.running?.item[1] === a.id), 5000);
    const b = await submitOk(s, waitWorkflow(3, 50, 10));
    await until('the second job on a worker', () => s!.workers.some((w) => w.queue.running?.item[1] === b.id), 5000);
    const first = s.workers.find((w) => ran(w).includes(a.id))!;
    expect(ran(first)).toEqual([a.id]);
    // A third job has a slot on either; each worker runs one job, so it goes to the first in order.
    const c = await submitOk(s, waitWorkflow(4, 10, 1));
    for (const j of [a, b, c]) await waitForJob(s, j.id, 'succeeded', 5000);
    expect(s.workers.map((w) => ran(w).length).sort()).toEqual([1, 2]);
  });
});

describe('a worker that refuses connections', () => {
  it('is not used while down and comes back after accept()', async () => {
    s = await startWorkerService({ workers: 2 });
    const [up, down] = s.workers;
    await down.refuse();
    await until('the engine saw the worker go down', () => s!.log.some((l) => l.message === 'worker is down' && l.detail?.worker === down.url), 5000);
    expect(s.engine.readiness()).toEqual({ state: 'ready' });

    const first = [];
    for (let i = 0; i < 3; i++) first.push(await submitOk(s, waitWorkflow(10 + i, 10, 2)));
    for (const j of first) await waitForJob(s, j.id, 'succeeded', 5000);
    expect(ran(up)).toEqual(first.map((j) => j.id));
    expect(ran(down)).toEqual([]);
    // It is asked again and again, less and less often (200 ms at most here).
    const asked = down.requests.length;

    await down.accept();
    await until(
      'the engine saw the worker come back',
      () => s!.log.some((l) => l.message === 'worker is back' && l.detail?.worker === down.url),
      5000,
    );
    await s.connected([down]);
    expect(down.requests.length).toBeGreaterThan(asked);
    const again = [await submitOk(s, waitWorkflow(20, 40, 5)), await submitOk(s, waitWorkflow(21, 40, 5))];
    for (const j of again) await waitForJob(s, j.id, 'succeeded', 5000);
    expect(ran(down)).toHaveLength(1);
    expect([...ran(up), ...ran(down)]).toEqual(expect.arrayContaining(again.map((j) => j.id)));
  });

  it('the engine is unavailable while every worker is down; jobs wait and run once one is back', async () => {
    s = await startWorkerService({ workers: 1 });
    const [w] = s.workers;
    await w.refuse();
    await until('the worker is down', () => s!.engine.readiness().state === 'unavailable', 5000);
    expect(s.engine.readiness()).toMatchObject({ state: 'unavailable', detail: expect.any(String) });
    // Node classes are still known (from when it answered), so the job is accepted and waits.
    const job = await submitOk(s, saveImageWorkflow(0x222222));
    await new Promise((r) => setTimeout(r, 300));
    expect((await waitForJob(s, job.id, ['queued', 'running'])).status).toBe('queued');
    await w.accept();
    await waitForJob(s, job.id, 'succeeded', 5000);
    expect(ran(w)).toEqual([job.id]);
  });
});

describe('a worker hanging on /object_info', () => {
  it('is down while its /object_info hangs, asked again with backoff, and used once it answers', async () => {
    s = await startWorkerService({
      workers: [{ failures: { routes: [{ route: 'GET /object_info', hang: true, times: 2 }] } }],
      engine: { objectInfoTimeoutMs: 300, definitionsRefreshMs: 400 },
      waitConnected: false,
    });
    const [w] = s.workers;
    const asked = () => w.requests.filter((r) => r.path === '/object_info').length;
    await until('the worker is up', () => s!.engine.readiness().state === 'ready', 5000);
    expect(asked()).toBe(3);
    const job = await submitOk(s, saveImageWorkflow(0x121212));
    await waitForJob(s, job.id, 'succeeded', 5000);

    // Up, then a refresh of its classes hangs: down, and back once it answers.
    w.failures.routes.push({ route: 'GET /object_info', hang: true, times: 1 });
    await until(
      'the engine saw the worker go down',
      () => s!.log.some((l) => l.message === 'worker is down' && /object_info/.test(String(l.detail?.error))),
      5000,
    );
    await until('the engine saw the worker come back', () => s!.log.some((l) => l.message === 'worker is back'), 5000);
    const after = await submitOk(s, saveImageWorkflow(0x131313));
    await waitForJob(s, after.id, 'succeeded', 5000);
  });
});

/** A node class only one worker has; it waits `ms` so its worker stays busy. */
const onlyHere = defineNode({
  name: 'OnlyHere',
  category: 'test',
  output_node: true,
  cacheable: false,
  required: { ms: ['INT', { default: 100, min: 0, max: 10_000 }] },
  async run({ ms }, ctx) {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, ms as number);
      ctx.signal.addEventListener('abort', () => (clearTimeout(t), reject(ctx.signal.reason)), { once: true });
    });
    return { outputs: [], ui: { text: [`waited ${ms}`] } };
  },
});

describe('workers with different node classes', () => {
  it('a job goes to a worker that has its classes, waiting for it when it is busy', async () => {
    s = await startWorkerService({ workers: [{ nodes: [onlyHere] }, {}] });
    const [has, lacks] = s.workers;
    await until('both workers known', () => s!.engine.readiness().state === 'ready');
    const wf = (ms: number) => ({ o: { class_type: 'OnlyHere', inputs: { ms } } });
    const a = await submitOk(s, wf(300));
    await until('the first job running', () => has.queue.running?.item[1] === a.id, 5000);
    const b = await submitOk(s, wf(20));
    const other = await submitOk(s, saveImageWorkflow(0x333333));
    for (const j of [a, b, other]) await waitForJob(s, j.id, 'succeeded', 5000);
    expect(ran(has)).toEqual([a.id, b.id]);
    expect(ran(lacks)).toEqual([other.id]);
  });
});
