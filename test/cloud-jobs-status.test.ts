// GET /api/job/{id}/status, GET /api/jobs and GET /api/jobs/{id}: every
// state-machine status mapped to the cloud's five, the contract's fields,
// filters, sorting and pages, and one account never seeing another's jobs.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { ISO, testClock, UUID } from './helpers/assets.ts';
import {
  type CloudJobsHarness,
  cloudStatusOf,
  expectCloudError,
  getJson,
  promptOk,
  startCloudAccounts,
  stubbornWorkflow,
} from './helpers/cloud-jobs.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, cancelJob, saveImageWorkflow, waitForJob } from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';

const failWorkflow = {
  f1: { class_type: 'Number', inputs: { value: 1 } },
  f2: { class_type: 'Fail', inputs: { value: ['f1', 0] } },
  f3: { class_type: 'Show', inputs: { value: ['f2', 0] } },
};
const STATUS_FIELDS = [
  'assigned_inference',
  'completed_at',
  'created_at',
  'error_message',
  'id',
  'last_state_update',
  'started_at',
  'status',
  'updated_at',
];

describe.each(MODES)('cloud job status and job lists (%s)', (mode) => {
  let h: CloudJobsHarness;
  let alice: CloudJobsHarness;
  let bob: CloudJobsHarness;
  const start = async (options: Partial<ServiceOptions> = {}) => {
    ({ h, alice, bob } = await startCloudAccounts(mode, options));
  };
  afterEach(async () => h?.close());
  const v2 = () => asKey(h, 'key-alice');

  it('maps every status: pending, in_progress (running and canceling), completed, failed, cancelled', async () => {
    await start({ tierLimits: { free: 2 } });
    const done = await promptOk(alice, sumWorkflow('s'));
    await waitForJob(v2(), done.prompt_id, 'succeeded');
    expect(await cloudStatusOf(alice, done.prompt_id)).toBe('completed');

    const failed = await promptOk(alice, failWorkflow);
    await waitForJob(v2(), failed.prompt_id, 'failed');
    const { body: f } = await getJson(alice, `/api/job/${failed.prompt_id}/status`);
    expect(f.status).toBe('failed');
    expect(f.error_message).toContain('cannot do that');

    const running = await promptOk(alice, waitWorkflow(1, 60_000));
    const stubborn = await promptOk(alice, stubbornWorkflow(1500));
    await waitForJob(v2(), running.prompt_id, 'running');
    await waitForJob(v2(), stubborn.prompt_id, 'running');
    const pending = await promptOk(alice, waitWorkflow(2, 60_000));
    const { res, body: p } = await getJson(alice, `/api/job/${pending.prompt_id}/status`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(p).sort()).toEqual(STATUS_FIELDS);
    expect(p).toMatchObject({
      id: pending.prompt_id,
      status: 'pending',
      started_at: null,
      completed_at: null,
      assigned_inference: null,
      error_message: null,
    });
    expect(p.created_at).toMatch(ISO);
    expect(p.updated_at).toBe(p.created_at);
    const { body: r } = await getJson(alice, `/job/${running.prompt_id}/status`);
    expect(r.status).toBe('in_progress');
    expect(r.started_at).toMatch(ISO);
    expect(r.updated_at).toBe(r.started_at);

    // The stubborn node ignores the cancel until it returns: the job is canceling, still in progress.
    expect((await cancelJob(v2(), stubborn.prompt_id)).body.status).toBe('canceling');
    expect(await cloudStatusOf(alice, stubborn.prompt_id)).toBe('in_progress');
    // Canceled while pending (before the stubborn job's slot frees up).
    await cancelJob(v2(), pending.prompt_id);
    const { body: c } = await getJson(alice, `/api/job/${pending.prompt_id}/status`);
    expect(c).toMatchObject({ status: 'cancelled', started_at: null, error_message: null });
    expect(c.completed_at).toMatch(ISO);
    expect(c.updated_at).toBe(c.completed_at);
    await waitForJob(v2(), stubborn.prompt_id, 'canceled');
    expect(await cloudStatusOf(alice, stubborn.prompt_id)).toBe('cancelled');
    await cancelJob(v2(), running.prompt_id);
    await waitForJob(v2(), running.prompt_id, 'canceled');
    expect(await cloudStatusOf(alice, running.prompt_id)).toBe('cancelled');
  });

  it("another account's job, an unknown or malformed id and an expired job are 404", async () => {
    const clock = testClock(Date.now());
    await start({ now: clock.now, jobRetentionSeconds: 3600 });
    const job = await promptOk(alice, sumWorkflow('x'));
    await waitForJob(v2(), job.prompt_id, 'succeeded');
    for (const path of [`/api/job/${job.prompt_id}/status`, `/api/jobs/${job.prompt_id}`]) {
      expectCloudError(await getJson(bob, path), 404, 'not_found');
      expect((await getJson(alice, path)).res.status).toBe(200);
    }
    for (const id of [crypto.randomUUID(), 'nope', '..%2F..']) {
      expectCloudError(await getJson(alice, `/api/job/${id}/status`), 404, 'not_found');
      expectCloudError(await getJson(alice, `/api/jobs/${id}`), 404, 'not_found');
    }
    expectCloudError(await getJson(h, `/api/job/${job.prompt_id}/status`), 401, 'unauthorized');
    clock.advance(3600_000);
    expectCloudError(await getJson(alice, `/api/job/${job.prompt_id}/status`), 404, 'not_found');
    expectCloudError(await getJson(alice, `/api/jobs/${job.prompt_id}`), 404, 'not_found');
    expect((await getJson(alice, '/api/jobs')).body).toEqual({ jobs: [], pagination: { offset: 0, limit: 100, total: 0, has_more: false } });
  });

  it("GET /api/jobs: the caller's jobs newest first, with the list fields of each status", async () => {
    await start();
    const image = await promptOk(alice, saveImageWorkflow());
    await waitForJob(v2(), image.prompt_id, 'succeeded');
    const failed = await promptOk(alice, failWorkflow);
    await waitForJob(v2(), failed.prompt_id, 'failed');
    const running = await promptOk(alice, waitWorkflow(1, 60_000));
    await waitForJob(v2(), running.prompt_id, 'running');
    const pending = await promptOk(alice, waitWorkflow(2, 60_000));
    const theirs = await promptOk(bob, sumWorkflow('b'));

    const { res, body } = await getJson(alice, '/api/jobs');
    expect(res.status).toBe(200);
    expect(body.pagination).toEqual({ offset: 0, limit: 100, total: 4, has_more: false });
    expect(body.jobs.map((j: any) => j.id)).toEqual([pending.prompt_id, running.prompt_id, failed.prompt_id, image.prompt_id]);
    const [p, r, f, i] = body.jobs;
    const nowSeconds = Date.now() / 1000;
    for (const j of body.jobs) {
      expect(j.id).toMatch(UUID);
      expect(Number.isInteger(j.create_time)).toBe(true);
      expect(Math.abs(j.create_time - nowSeconds)).toBeLessThan(60); // seconds, as the contract says
    }
    expect(p).toEqual({ id: pending.prompt_id, status: 'pending', create_time: expect.any(Number) });
    expect(r).toEqual({ id: running.prompt_id, status: 'in_progress', create_time: expect.any(Number) });
    expect(f).toMatchObject({ status: 'failed', outputs_count: 0 });
    expect(f.execution_error).toEqual({
      node_id: 'f2',
      node_type: 'Fail',
      exception_message: expect.stringContaining('cannot do that'),
      exception_type: 'TypeError',
      traceback: expect.any(Array),
      current_inputs: {},
      current_outputs: {},
    });
    expect(f.preview_output).toBeUndefined();
    expect(i).toMatchObject({ status: 'completed', outputs_count: 1 });
    expect(i.preview_output).toEqual({
      filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/),
      subfolder: '',
      type: 'output',
      nodeId: 's',
      mediaType: 'images',
    });
    expect(i.execution_end_time).toBeGreaterThanOrEqual(i.execution_start_time);
    expect(Math.abs(i.execution_start_time - Date.now())).toBeLessThan(60_000); // milliseconds

    const { body: theirList } = await getJson(bob, '/jobs');
    expect(theirList.jobs.map((j: any) => j.id)).toEqual([theirs.prompt_id]);
  });

  it('GET /api/jobs filters by status and output type, sorts, pages, and refuses bad parameters', async () => {
    await start({ tierLimits: { free: 3 } });
    const ids: string[] = [];
    for (const ms of [50, 1, 20]) {
      const { prompt_id } = await promptOk(alice, waitWorkflow(ms, ms));
      await waitForJob(v2(), prompt_id, 'succeeded');
      ids.push(prompt_id);
    }
    const image = await promptOk(alice, saveImageWorkflow(0x123456));
    await waitForJob(v2(), image.prompt_id, 'succeeded');
    const pending = await promptOk(alice, waitWorkflow(9, 60_000));
    const list = async (query: string) => {
      const { res, body } = await getJson(alice, `/api/jobs?${query}`);
      expect({ status: res.status, body }).toMatchObject({ status: 200 });
      return body;
    };
    const idsOf = (b: any) => b.jobs.map((j: any) => j.id);
    expect(idsOf(await list('status=completed&output_type=image'))).toEqual([image.prompt_id]);
    expect(idsOf(await list('output_type=video'))).toEqual([]);
    expect((await list('status=pending,in_progress')).jobs.map((j: any) => j.status).every((s: string) => s !== 'completed')).toBe(true);
    expect(idsOf(await list('status=completed&sort_order=asc'))).toEqual([...ids, image.prompt_id]);
    const byTime = await list('status=completed&sort_by=execution_time&limit=2');
    // The longest run first, by the times the jobs report (on a busy machine a 1 ms wait may outlast a 50 ms one).
    const took = (j: any) => j.execution_end_time - j.execution_start_time;
    const all = (await list('status=completed')).jobs;
    expect(took(byTime.jobs[0])).toBe(Math.max(...all.map(took)));
    expect(took(byTime.jobs[0])).toBeGreaterThanOrEqual(took(byTime.jobs[1]));
    expect(byTime.pagination).toEqual({ offset: 0, limit: 2, total: 4, has_more: true });
    const page = await list('limit=2&offset=4');
    expect(page.pagination).toEqual({ offset: 4, limit: 2, total: 5, has_more: false });
    expect(idsOf(page)).toEqual([ids[0]]);
    expect(idsOf(await list(''))[0]).toBe(pending.prompt_id);
    expect(await list(`workflow_id=${crypto.randomUUID()}`)).toEqual({ jobs: [], pagination: { offset: 0, limit: 100, total: 0, has_more: false } });
    for (const bad of [
      'status=done',
      'status=completed,,',
      'output_type=text',
      'sort_by=name',
      'sort_order=up',
      'limit=0',
      'limit=1001',
      'limit=x',
      'offset=-1',
      'offset=1.5',
    ]) {
      const r = await getJson(alice, `/api/jobs?${bad}`);
      expectCloudError(r, 400, 'invalid_request');
      expect(r.body.message).toContain(bad.split('=')[0]);
    }
  });

  it('GET /api/jobs/{id}: the whole job, with outputs, execution status and meta once it finished', async () => {
    await start();
    const image = await promptOk(alice, saveImageWorkflow());
    await waitForJob(v2(), image.prompt_id, 'succeeded');
    const { res, body } = await getJson(alice, `/api/jobs/${image.prompt_id}`);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ id: image.prompt_id, status: 'completed', workflow: saveImageWorkflow(), outputs_count: 1 });
    expect(body.update_time).toBeGreaterThanOrEqual(body.create_time);
    const file = { filename: expect.stringMatching(/^[0-9a-f]{64}\.png$/), subfolder: '', type: 'output' };
    expect(body.outputs).toEqual({ s: { images: [file] } });
    expect(body.execution_status).toMatchObject({ status_str: 'success', completed: true });
    expect(body.execution_meta).toEqual({ s: { node_id: 's', display_node: 's', parent_node: null, real_node_id: 's' } });
    // The file reference is what /api/view serves.
    expect(body.preview_output.filename).toBe(body.outputs.s.images[0].filename);

    const pending = await promptOk(alice, { ...waitWorkflow(1, 60_000) });
    const { body: p } = await getJson(alice, `/jobs/${pending.prompt_id}`);
    expect(Object.keys(p).sort()).toEqual(['create_time', 'id', 'status', 'update_time', 'workflow']);
  });
});
