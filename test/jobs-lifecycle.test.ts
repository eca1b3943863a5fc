// A job's life after submission: reading it and its workflow, canceling it
// queued, running and finished, failing nodes, metrics and queue positions,
// tier limits and FIFO order, expiry, and the links it carries.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { expectEnvelope, ISO } from './helpers/assets.ts';
import { MODES } from './helpers/harness.ts';
import {
  ALICE_AND_BOB,
  asKey,
  cancelJob,
  expectJobShape,
  getJob,
  getWorkflow,
  type JobsHarness,
  jobNow,
  saveImageWorkflow,
  sleep,
  startJobs,
  submit,
  submitOk,
  TERMINAL,
  until,
  waitForJob,
} from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';
import { openEvents } from './helpers/sse-client.ts';

const failWorkflow = () => ({
  n: { class_type: 'Number', inputs: { value: 1 } },
  f: { class_type: 'Fail', inputs: { value: ['n', 0] } },
  s: { class_type: 'Show', inputs: { value: ['f', 0] } },
});

/** A Wait job that runs about `steps * ms` and can be canceled between steps. */
const slow = (value = 1, steps = 40, ms = 25) => waitWorkflow(value, ms, steps);

describe.each(MODES)('job lifecycle (%s)', (mode) => {
  let h: JobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  /** Cancels whatever is still going, so close() has nothing to wait for. */
  async function cancelAll(hh: JobsHarness, ids: string[]) {
    for (const id of ids) await cancelJob(hh, id);
    for (const id of ids) await waitForJob(hh, id, TERMINAL);
  }

  it('404 not_found for an unknown or malformed id, on every job route', async () => {
    await start();
    for (const id of [crypto.randomUUID(), 'nope', '123', '00000000-0000-0000-0000-00000000000g', `${crypto.randomUUID()}x`]) {
      await expectEnvelope(await h.fetch(`/api/v2/jobs/${id}`), 404, 'not_found');
      await expectEnvelope(await h.fetch(`/api/v2/jobs/${id}/workflow`), 404, 'not_found');
      await expectEnvelope(await h.fetch(`/api/v2/jobs/${id}/cancel`, { method: 'POST' }), 404, 'not_found');
      await expectEnvelope(await h.fetch(`/api/v2/jobs/${id}/events`), 404, 'not_found');
    }
  });

  it('GET /workflow gives the workflow as submitted, format api, and never extra_data', async () => {
    await start();
    const workflow = { ...sumWorkflow('n', 1, 2), n4: { class_type: 'Show', inputs: { value: ['n3', 0] }, _meta: { title: 'Result' } } };
    const secret = `secret-key-${crypto.randomUUID()}`;
    const { res, body: job } = await submit(h, { workflow, extra_data: { api_key_comfy_org: secret } });
    expect(res.status).toBe(201);
    expect(JSON.stringify(job)).not.toContain(secret);
    const wf = await getWorkflow(h, job.id);
    expect(wf.res.status).toBe(200);
    expect(wf.body).toEqual({ workflow, format: 'api' });
    await waitForJob(h, job.id, 'succeeded');
    const after = await getWorkflow(h, job.id);
    expect(after.body).toEqual({ workflow, format: 'api' });
    expect(JSON.stringify(after.body)).not.toContain(secret);
    expect(JSON.stringify(await jobNow(h, job.id))).not.toContain(secret);
  });

  it('cancel of a queued job: canceled at once, completed_at set, it never runs', async () => {
    await start();
    const running = await submitOk(h, slow(1, 8, 25));
    await waitForJob(h, running.id, 'running');
    const queued = await submitOk(h, slow(2, 1, 10));
    expect(queued.status).toBe('queued');

    const { res, body } = await cancelJob(h, queued.id);
    expect(res.status).toBe(200);
    expectJobShape(body);
    expect(body).toMatchObject({ id: queued.id, status: 'canceled', started_at: null, queue_position: null, error: null, outputs: [] });
    expect(body.completed_at).toMatch(ISO);
    expect(body.metrics).toEqual({ queue_ms: null, execution_ms: null });

    // The running job ends normally; the canceled one never starts after it.
    await waitForJob(h, running.id, 'succeeded');
    await sleep(100);
    const later = await jobNow(h, queued.id);
    expect(later).toMatchObject({ status: 'canceled', started_at: null });
    expect(later.completed_at).toBe(body.completed_at);
    expect(h.runs.Wait).toBe(1);
  });

  it('cancel of a running Wait job: canceling (or canceled) at once, then canceled with error null', async () => {
    await start();
    const job = await submitOk(h, slow(1, 40, 25));
    // Inside the Wait node, a few steps in.
    await until('the Wait node reports steps', async () => ((await jobNow(h, job.id)).progress?.step ?? 0) >= 2);
    const { res, body } = await cancelJob(h, job.id);
    expect(res.status).toBe(200);
    expectJobShape(body);
    expect(['canceling', 'canceled']).toContain(body.status);
    const done = expectJobShape(await waitForJob(h, job.id, 'canceled', 1500));
    expect(done.error).toBeNull();
    expect(done.completed_at).toMatch(ISO);
    expect(done.started_at).toMatch(ISO);
    expect(Number.isInteger(done.metrics.execution_ms)).toBe(true);
    expect(done.outputs).toEqual([]);
    expect(done.progress === null || done.progress.value < 1).toBe(true);
    expect(h.runs.Show).toBeUndefined();
    // Well before the 1 s the job would have taken.
    expect(Date.parse(done.completed_at) - Date.parse(done.started_at)).toBeLessThan(900);
  });

  it('cancel is idempotent: a terminal job is returned unchanged', async () => {
    await start();
    const ok = await waitForJob(h, (await submitOk(h, sumWorkflow('n'))).id, 'succeeded');
    const failed = await waitForJob(h, (await submitOk(h, failWorkflow())).id, 'failed');
    const c = await submitOk(h, slow(3));
    await cancelJob(h, c.id);
    const canceled = await waitForJob(h, c.id, 'canceled');
    for (const job of [ok, failed, canceled]) {
      for (let i = 0; i < 2; i++) {
        const { res, body } = await cancelJob(h, job.id);
        expect(res.status).toBe(200);
        expect(body).toMatchObject({ id: job.id, status: job.status, completed_at: job.completed_at, error: job.error, metrics: job.metrics });
      }
      expect((await jobNow(h, job.id)).status).toBe(job.status);
    }
  });

  it('a node that throws fails the job with node_execution_error naming the node', async () => {
    await start();
    const job = expectJobShape(await waitForJob(h, (await submitOk(h, failWorkflow())).id, 'failed'));
    expect(job.error).toMatchObject({ code: 'node_execution_error', node_id: 'f', class_type: 'Fail', exception_type: 'TypeError' });
    expect(job.error.message).toContain('cannot do that');
    expect(job.error.traceback === null || typeof job.error.traceback === 'string').toBe(true);
    expect(job.completed_at).toMatch(ISO);
    expect(job.outputs).toEqual([]);
    expect(h.runs.Show).toBeUndefined();
  });

  it('metrics: null until started, queue_ms once running, both integers at the end', async () => {
    await start();
    const first = await submitOk(h, slow(1, 10, 20));
    const second = await submitOk(h, slow(2, 2, 20));
    const queued = await jobNow(h, second.id);
    expect(queued.status).toBe('queued');
    expect(queued.metrics).toEqual({ queue_ms: null, execution_ms: null });
    const running = await waitForJob(h, first.id, 'running');
    expect(Number.isInteger(running.metrics.queue_ms)).toBe(true);
    expect(running.metrics.queue_ms).toBeGreaterThanOrEqual(0);
    expect(running.metrics.execution_ms).toBeNull();
    const done = await waitForJob(h, second.id, 'succeeded');
    const [c, s, e] = [done.created_at, done.started_at, done.completed_at].map(Date.parse);
    expect(done.metrics).toEqual({ queue_ms: s - c, execution_ms: e - s });
    // It waited for the first job (about 200 ms).
    expect(done.metrics.queue_ms).toBeGreaterThanOrEqual(100);
  });

  it('queue_position: 0 for the next job, counting queued jobs of every account ahead, null once running', async () => {
    await start({ accounts: ALICE_AND_BOB, maxConcurrentJobs: 1 });
    const alice = asKey(h, 'ka');
    const bob = asKey(h, 'kb');
    const a1 = await submitOk(alice, slow(1));
    const r1 = await waitForJob(alice, a1.id, 'running');
    expect(r1.queue_position).toBeNull();
    const a2 = await submitOk(alice, slow(2, 8, 25));
    const b1 = await submitOk(bob, slow(3, 8, 25));
    const a3 = await submitOk(alice, slow(4, 1, 10));
    expect([a2.queue_position, b1.queue_position, a3.queue_position]).toEqual([0, 1, 2]);
    expect((await jobNow(alice, a2.id)).queue_position).toBe(0);
    expect((await jobNow(bob, b1.id)).queue_position).toBe(1);
    expect((await jobNow(alice, a3.id)).queue_position).toBe(2);

    // The first leaves: one of the next two starts, the others move up.
    await cancelJob(alice, a1.id);
    await until('a second job started', async () => {
      const s = [(await jobNow(alice, a2.id)).status, (await jobNow(bob, b1.id)).status];
      return s.some((x) => x !== 'queued');
    });
    const now = [await jobNow(alice, a2.id), await jobNow(bob, b1.id), await jobNow(alice, a3.id)];
    // One engine slot: exactly one of the three started, the two others moved up by one.
    const stillQueued = now.filter((j) => j.status === 'queued');
    expect(stillQueued).toHaveLength(2);
    expect(stillQueued.map((j) => j.queue_position)).toEqual([0, 1]);
    expect(now[2].status).toBe('queued');
    expect(now[2].queue_position).toBe(1);
    for (const j of now) if (j.status !== 'queued') expect(j.queue_position).toBeNull();
    for (const [hh, j] of [
      [alice, a2],
      [bob, b1],
      [alice, a3],
    ] as const) {
      const end = await waitForJob(hh, j.id, 'succeeded');
      expect(end.queue_position).toBeNull();
    }
  });

  it('tier limits: a creator account runs 3 jobs at once, a free one 1', async () => {
    const accounts = [
      { id: 'c', tier: 'creator', apiKeys: ['kc'] },
      { id: 'f', tier: 'free', apiKeys: ['kf'] },
    ];
    await start({ accounts });
    const creator = asKey(h, 'kc');
    const free = asKey(h, 'kf');
    const cJobs: string[] = [];
    for (let i = 0; i < 4; i++) cJobs.push((await submitOk(creator, slow(i, 40, 25))).id);
    const fJobs: string[] = [];
    for (let i = 0; i < 2; i++) fJobs.push((await submitOk(free, slow(10 + i, 40, 25))).id);

    const statuses = async (hh: JobsHarness, ids: string[]) => Promise.all(ids.map(async (id) => (await jobNow(hh, id)).status));
    await until('3 creator jobs and 1 free job running', async () => {
      const c = await statuses(creator, cJobs);
      const f = await statuses(free, fJobs);
      return c.filter((s) => s === 'running').length === 3 && f.filter((s) => s === 'running').length === 1;
    });
    await sleep(150);
    expect(await statuses(creator, cJobs)).toEqual(['running', 'running', 'running', 'queued']);
    expect(await statuses(free, fJobs)).toEqual(['running', 'queued']);
    await cancelAll(creator, cJobs);
    await cancelAll(free, fJobs);
  });

  it('tierLimits overrides the defaults', async () => {
    await start({ accounts: [{ id: 'c', tier: 'creator', apiKeys: ['kc'] }], tierLimits: { creator: 2 } });
    const creator = asKey(h, 'kc');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await submitOk(creator, slow(i, 40, 25))).id);
    await until(
      '2 running',
      async () => (await Promise.all(ids.map((id) => jobNow(creator, id)))).filter((j) => j.status === 'running').length === 2,
    );
    await sleep(150);
    expect((await Promise.all(ids.map((id) => jobNow(creator, id)))).map((j) => j.status)).toEqual(['running', 'running', 'queued']);
    await cancelAll(creator, ids);
  });

  it("an account's jobs run in submission order (FIFO)", async () => {
    await start();
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await submitOk(h, slow(i, 1, 30))).id);
    const jobs = [];
    for (const id of ids) jobs.push(await waitForJob(h, id, 'succeeded'));
    for (let i = 1; i < jobs.length; i++) {
      expect(Date.parse(jobs[i].started_at)).toBeGreaterThanOrEqual(Date.parse(jobs[i - 1].completed_at));
    }
  });

  it('a job past its retention is 404 everywhere (before and after a sweep), and so are its outputs', async () => {
    let offset = 0;
    await start({ now: () => Date.now() + offset, jobRetentionSeconds: 60 });
    const job = await waitForJob(h, (await submitOk(h, saveImageWorkflow())).id, 'succeeded');
    expect(Date.parse(job.expires_at) - Date.parse(job.created_at)).toBe(60_000);
    const output = job.outputs[0];
    expect((await h.fetch(`/api/v2/assets/${output.id}`)).status).toBe(200);

    offset += 30_000;
    expect((await getJob(h, job.id)).res.status).toBe(200);
    offset += 31_000;
    const check = async () => {
      await expectEnvelope(await h.fetch(`/api/v2/jobs/${job.id}`), 404, 'not_found');
      await expectEnvelope(await h.fetch(`/api/v2/jobs/${job.id}/workflow`), 404, 'not_found');
      await expectEnvelope(await h.fetch(`/api/v2/jobs/${job.id}/cancel`, { method: 'POST' }), 404, 'not_found');
      await expectEnvelope((await openEvents(h, job.id)).res, 404, 'not_found');
      await expectEnvelope(await h.fetch(`/api/v2/assets/${output.id}`), 404, 'not_found');
    };
    await check();
    // A job submitted now is not touched by the sweep.
    const fresh = await waitForJob(h, (await submitOk(h, sumWorkflow('n'))).id, 'succeeded');
    const swept = await h.service.sweep();
    expect(swept.jobs_expired).toBeGreaterThanOrEqual(1);
    await check();
    expect((await jobNow(h, fresh.id)).status).toBe('succeeded');
  });

  it('urls are host-relative and usable', async () => {
    await start();
    // Long enough to be canceled whatever the machine's speed; the cancel ends it at its next step.
    const job = expectJobShape(await submitOk(h, slow(1, 400, 25)));
    const self = await h.fetch(job.urls.self);
    expect(self.status).toBe(200);
    expect(((await self.json()) as any).id).toBe(job.id);
    const events = await openEvents(h, job.id);
    expect(events.res.status).toBe(200);
    await events.sse!.cancel();
    const cancel = await h.fetch(job.urls.cancel, { method: 'POST' });
    expect(cancel.status).toBe(200);
    await waitForJob(h, job.id, 'canceled');
  });

  it('urls carry the path of publicBaseUrl', async () => {
    await start({ publicBaseUrl: 'https://jobs.example.test/graph/' });
    const job = await submitOk(h, sumWorkflow('n'));
    expectJobShape(job, '/graph');
    expect(job.urls.self).toBe(`/graph/api/v2/jobs/${job.id}`);
    const done = await waitForJob(h, job.id, 'succeeded');
    expectJobShape(done, '/graph');
    const canceled = await cancelJob(h, job.id);
    expectJobShape(canceled.body, '/graph');
  });
});
