// A deployment's condition on each surface, in process and through a real
// server. Stopped (the operator's POST /ops/deployment/stop): every request
// of the v2, cloud, video and music surfaces answers 422 deployment_stopped
// in that surface's error shape (POST /prompt with the reference's `error`
// and `node_errors`), while the operator's surface still answers. Not ready
// (its engine says so): only submissions get 429 deployment_not_ready with
// Retry-After, everything else (polls, listings, uploads) goes on.
import { afterEach, describe, expect, it } from 'vitest';
import { type GatewayHarness, opAuth, quickWorkflow, reply, startGateway } from './helpers/deployments.ts';
import type { Harness } from './helpers/harness.ts';
import { MODES, uploadForm } from './helpers/harness.ts';
import { getJob, submitOk, waitForJob } from './helpers/jobs.ts';
import { MUSIC_PATH, musicForm } from './helpers/music.ts';
import { MULTIFRAME, multiframe, taskPath } from './helpers/video.ts';

const open: GatewayHarness[] = [];
afterEach(async () => {
  for (const g of open.splice(0).reverse()) await g.close();
});

async function gateway(mode: (typeof MODES)[number]): Promise<GatewayHarness> {
  const g = await startGateway(mode, { deployments: [{ id: 'default' }, { id: 'sdxl' }] });
  open.push(g);
  return g;
}

const post = (h: Harness, path: string, body: unknown, headers: Record<string, string> = {}) =>
  h.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const MUSIC_FIELDS = { prompt: 'a calm tune', duration: '1' };
const music = (h: Harness) => h.fetch(MUSIC_PATH, { method: 'POST', body: musicForm(MUSIC_FIELDS) });

async function operator(h: Harness, move: 'stop' | 'start') {
  const r = await reply(await h.fetch(`/ops/deployment/${move}`, { method: 'POST', headers: opAuth() }));
  expect({ status: r.status, state: r.body.state }).toEqual({ status: 200, state: move === 'stop' ? 'stopped' : 'ready' });
}

// Each surface's shape of a deployment refusal.
/** A stopped deployment's refusal names it; a not-ready one's may come from the engine. */
const messageOf = (status: number) => (status === 422 ? expect.stringContaining('"sdxl"') : expect.any(String));

async function expectV2(res: Response, status: number, code: string) {
  const r = await reply(res);
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { error: { code, message: messageOf(status) } } });
  return r;
}
async function expectCloud(res: Response, status: number, code: string) {
  const r = await reply(res);
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { code, message: messageOf(status) } });
  return r;
}
async function expectPrompt(res: Response, status: number, code: string) {
  const r = await reply(res);
  expect({ status: r.status, body: r.body }).toEqual({
    status,
    body: {
      code,
      message: messageOf(status),
      error: { type: code, message: expect.any(String), details: expect.any(String), extra_info: expect.any(Object) },
      node_errors: {},
    },
  });
  return r;
}
async function expectVideo(res: Response, status: number) {
  const r = await reply(res);
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { message: messageOf(status), details: expect.any(Array) } });
  return r;
}
async function expectMusic(res: Response, status: number, code: string) {
  const r = await reply(res);
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { detail: { code, message: messageOf(status) } } });
  return r;
}
const noRetryAfter = (r: { headers: Headers }) => expect(r.headers.get('retry-after')).toBeNull();
const retryAfter5 = (r: { headers: Headers }) => expect(r.headers.get('retry-after')).toBe('5');

describe.each(MODES)('deployment conditions on each surface (%s)', (mode) => {
  it('stopped: every request of v2, cloud, video and music answers 422 deployment_stopped in its shape; the operator surface answers', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ host: 'sdxl' });
    // Made before the stop: they are refused too, not just new work.
    const job = await submitOk(sdxl, quickWorkflow());
    await waitForJob(sdxl, job.id, 'succeeded', 15_000);
    const taskRes = await post(sdxl, MULTIFRAME, multiframe());
    const task: any = await taskRes.json();
    expect(taskRes.status).toBe(200);
    await operator(sdxl, 'stop');

    // v2
    noRetryAfter(await expectV2(await post(sdxl, '/api/v2/jobs', { workflow: quickWorkflow() }), 422, 'deployment_stopped'));
    await expectV2(await sdxl.fetch(`/api/v2/jobs/${job.id}`), 422, 'deployment_stopped');
    await expectV2(await sdxl.fetch('/api/v2/jobs'), 422, 'deployment_stopped');
    await expectV2(await sdxl.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('x') }), 422, 'deployment_stopped');
    await expectV2(await sdxl.fetch(`/api/v2/jobs/${job.id}/cancel`, { method: 'POST' }), 422, 'deployment_stopped');
    // cloud: the submission in its own shape, bare and under /api; the rest as cloud errors
    noRetryAfter(await expectPrompt(await post(sdxl, '/api/prompt', { prompt: quickWorkflow() }), 422, 'deployment_stopped'));
    await expectPrompt(await post(sdxl, '/prompt', { prompt: quickWorkflow() }), 422, 'deployment_stopped');
    await expectCloud(await sdxl.fetch('/api/queue'), 422, 'deployment_stopped');
    await expectCloud(await sdxl.fetch('/api/history'), 422, 'deployment_stopped');
    await expectCloud(await sdxl.fetch(`/api/job/${job.id}/status`), 422, 'deployment_stopped');
    await expectCloud(await sdxl.fetch('/api/object_info'), 422, 'deployment_stopped');
    // video: create and read
    noRetryAfter(await expectVideo(await post(sdxl, MULTIFRAME, multiframe()), 422));
    await expectVideo(await sdxl.fetch(taskPath(task.id ?? task.task_id)), 422);
    // music
    noRetryAfter(await expectMusic(await music(sdxl), 422, 'deployment_stopped'));
    // HEAD: the status, no body
    const head = await sdxl.fetch(`/api/v2/jobs/${job.id}`, { method: 'HEAD' });
    expect(head.status).toBe(422);
    expect(await head.text()).toBe('');

    // The same deployment by its path prefix: the same refusals.
    await expectV2(await g.at({ path: 'sdxl' }).fetch('/api/v2/jobs'), 422, 'deployment_stopped');
    // The operator's surface is how it is brought back: it answers.
    expect((await sdxl.fetch('/healthz')).status).toBe(200);
    const view = await reply(await sdxl.fetch('/ops/deployment', { headers: opAuth() }));
    expect(view.body).toMatchObject({ id: 'sdxl', state: 'stopped', detail: expect.stringMatching(/^stopped by an operator at \d{4}-/) });
    // Other deployments go on.
    expect((await post(g.at('none'), '/api/v2/jobs', { workflow: quickWorkflow() })).status).toBe(201);

    await operator(sdxl, 'start');
    expect((await getJob(sdxl, job.id)).res.status).toBe(200);
    expect((await post(sdxl, '/api/prompt', { prompt: quickWorkflow(2) })).status).toBe(200);
  });

  it('not ready, its engine knowing no node class yet: submissions on each surface get 429 deployment_not_ready with Retry-After; polls, listings and uploads go on', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ host: 'sdxl' });
    const { setReadiness } = g.deployments.sdxl!.engine;
    const job = await submitOk(sdxl, quickWorkflow());
    await waitForJob(sdxl, job.id, 'succeeded', 15_000);
    const taskRes = await post(sdxl, MULTIFRAME, multiframe());
    const task: any = await taskRes.json();
    expect(taskRes.status).toBe(200);

    setReadiness({ state: 'starting', detail: 'the engine is loading its models' }, { definitions: false });
    // Submissions
    retryAfter5(await expectV2(await post(sdxl, '/api/v2/jobs', { workflow: quickWorkflow() }), 429, 'deployment_not_ready'));
    retryAfter5(await expectPrompt(await post(sdxl, '/api/prompt', { prompt: quickWorkflow() }), 429, 'deployment_not_ready'));
    retryAfter5(await expectPrompt(await post(sdxl, '/prompt', { prompt: quickWorkflow() }), 429, 'deployment_not_ready'));
    retryAfter5(await expectVideo(await post(sdxl, MULTIFRAME, multiframe()), 429));
    retryAfter5(await expectMusic(await music(sdxl), 429, 'deployment_not_ready'));
    // Nothing was queued by the refused submissions.
    const listed = await reply(await sdxl.fetch('/api/v2/jobs'));
    expect(listed.body.jobs.map((j: any) => j.id)).toEqual([job.id]);

    // Everything else goes on.
    const got = await getJob(sdxl, job.id);
    expect({ status: got.res.status, job: got.body.status }).toEqual({ status: 200, job: 'succeeded' });
    expect((await sdxl.fetch(`/api/job/${job.id}/status`)).status).toBe(200);
    expect((await sdxl.fetch(taskPath(task.id ?? task.task_id))).status).toBe(200);
    expect((await sdxl.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('still uploads') })).status).toBe(201);
    const view = await reply(await sdxl.fetch('/ops/deployment', { headers: opAuth() }));
    expect(view.body).toEqual({
      id: 'sdxl',
      state: 'not_ready',
      detail: 'the engine is loading its models',
      engine: { name: expect.any(String), state: 'starting' },
    });
    // The other deployment, whose engine is ready, takes work.
    expect((await post(g.at('none'), '/api/v2/jobs', { workflow: quickWorkflow() })).status).toBe(201);

    setReadiness({ state: 'ready' });
    const again = await submitOk(sdxl, quickWorkflow(5));
    await waitForJob(sdxl, again.id, 'succeeded', 15_000);
    expect((await post(sdxl, '/api/prompt', { prompt: quickWorkflow(6) })).status).toBe(200);
    expect((await music(sdxl)).status).toBe(200);
    expect((await post(sdxl, MULTIFRAME, multiframe())).status).toBe(200);
  });

  it('not ready while its node classes are known (starting, taking no job yet): every submission gets 429 too; once the engine is ready they are taken and run', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ path: 'sdxl' });
    const { setReadiness } = g.deployments.sdxl!.engine;
    setReadiness({ state: 'starting', detail: 'the engine is loading' });
    retryAfter5(await expectV2(await post(sdxl, '/api/v2/jobs', { workflow: quickWorkflow() }), 429, 'deployment_not_ready'));
    retryAfter5(await expectPrompt(await post(sdxl, '/api/prompt', { prompt: quickWorkflow() }), 429, 'deployment_not_ready'));
    retryAfter5(await expectVideo(await post(sdxl, MULTIFRAME, multiframe()), 429));
    retryAfter5(await expectMusic(await music(sdxl), 429, 'deployment_not_ready'));
    // The routes take a trailing slash, and so does the refusal.
    retryAfter5(await expectV2(await post(sdxl, '/api/v2/jobs/', { workflow: quickWorkflow() }), 429, 'deployment_not_ready'));
    retryAfter5(await expectPrompt(await post(sdxl, '/api/prompt/', { prompt: quickWorkflow() }), 429, 'deployment_not_ready'));
    retryAfter5(await expectPrompt(await post(sdxl, '/prompt//', { prompt: quickWorkflow() }), 429, 'deployment_not_ready'));
    // Reads go on, those that need the node classes too (the cloud queue and history, object_info).
    expect((await sdxl.fetch('/api/object_info')).status).toBe(200);
    expect((await sdxl.fetch('/api/queue')).status).toBe(200);
    expect((await sdxl.fetch('/api/history')).status).toBe(200);
    expect((await sdxl.fetch('/api/v2/jobs')).status).toBe(200);
    setReadiness({ state: 'ready' });
    const job = await submitOk(sdxl, quickWorkflow(8));
    const prompt = await reply(await post(sdxl, '/api/prompt', { prompt: quickWorkflow(9) }));
    expect(prompt.status).toBe(200);
    await waitForJob(sdxl, job.id, 'succeeded', 15_000);
    await waitForJob(sdxl, prompt.body.prompt_id, 'succeeded', 15_000);
  });

  it('an engine that takes jobs while it comes up (warming up, or every server lost after its nodes were known): ready, jobs wait queued until the engine is', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ host: 'sdxl' });
    const { setReadiness } = g.deployments.sdxl!.engine;
    setReadiness({ state: 'starting', detail: 'the engine servers are warming up', queuesJobs: true });
    expect((await reply(await sdxl.fetch('/ops/deployment', { headers: opAuth() }))).body).toEqual({
      id: 'sdxl',
      state: 'ready',
      detail: 'the engine servers are warming up; jobs wait in the queue',
      engine: { name: expect.any(String), state: 'starting' },
    });
    const job = await submitOk(sdxl, quickWorkflow(21));
    expect(job.status).toBe('queued');
    const prompt = await reply(await post(sdxl, '/api/prompt', { prompt: quickWorkflow(22) }));
    expect(prompt.status).toBe(200);
    setReadiness({ state: 'unavailable', detail: 'no worker is reachable' });
    const lost = await submitOk(sdxl, quickWorkflow(23));
    // The scheduler gives an engine that is not ready nothing: they wait.
    for (const id of [job.id, prompt.body.prompt_id, lost.id]) expect((await getJob(sdxl, id)).body.status).toBe('queued');
    expect((await sdxl.fetch('/readyz')).status).toBe(503);

    setReadiness({ state: 'ready' });
    for (const id of [job.id, prompt.body.prompt_id, lost.id]) await waitForJob(sdxl, id, 'succeeded', 15_000);
    expect((await sdxl.fetch('/readyz')).status).toBe(200);
  });

  it('stopped wins over not ready: 422, not 429, on a submission', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ path: 'sdxl' });
    g.deployments.sdxl!.engine.setReadiness({ state: 'unavailable', detail: 'no worker' });
    await operator(sdxl, 'stop');
    const view = await reply(await sdxl.fetch('/ops/deployment', { headers: opAuth() }));
    expect(view.body.state).toBe('stopped');
    await expectV2(await post(sdxl, '/api/v2/jobs', { workflow: quickWorkflow() }), 422, 'deployment_stopped');
    await expectMusic(await music(sdxl), 422, 'deployment_stopped');
  });
});
