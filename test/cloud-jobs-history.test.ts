// GET /api/history and /api/history/{id} (and bare) in the reference shape:
// finished jobs only, newest first, pages, outputs named by content, the
// status and messages of each ending; POST /api/history taking jobs out of
// it; the reference's routes with nothing behind them (/free, /extensions,
// /embeddings); then GET /api/system_stats and GET /api/features.
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVICE_VERSION } from '../core/cloud/system.ts';
import type { ServiceOptions } from '../index.ts';
import { testClock } from './helpers/assets.ts';
import {
  ACCOUNTS,
  asCloud,
  type CloudJobsHarness,
  expectCloudError,
  getJson,
  postJson,
  promptOk,
  startCloudAccounts,
  startCloudJobs,
} from './helpers/cloud-jobs.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, cancelJob, saveImageWorkflow, waitForJob } from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';

const failWorkflow = {
  f1: { class_type: 'Number', inputs: { value: 1 } },
  f2: { class_type: 'Fail', inputs: { value: ['f1', 0] } },
  f3: { class_type: 'Show', inputs: { value: ['f2', 0] } },
};

describe.each(MODES)('cloud history (%s)', (mode) => {
  let h: CloudJobsHarness;
  let alice: CloudJobsHarness;
  let bob: CloudJobsHarness;
  const start = async (options: Partial<ServiceOptions> = {}) => {
    ({ h, alice, bob } = await startCloudAccounts(mode, options));
  };
  afterEach(async () => h?.close());
  const v2 = () => asKey(h, 'key-alice');
  const finish = async (workflow: Record<string, unknown>, status = 'succeeded') => {
    const body = await promptOk(alice, workflow);
    await waitForJob(v2(), body.prompt_id, status);
    return body;
  };

  it('a succeeded job: the 5-tuple prompt, outputs named by content, success status and meta', async () => {
    await start();
    const job = await finish(saveImageWorkflow());
    const { res, body } = await getJson(alice, `/api/history/${job.prompt_id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(body)).toEqual([job.prompt_id]);
    const entry = body[job.prompt_id];
    expect(Object.keys(entry).sort()).toEqual(['meta', 'outputs', 'prompt', 'status']);
    expect(entry.prompt).toEqual([job.number, job.prompt_id, saveImageWorkflow(), {}, ['s']]);
    // The file name is the blake3 of the output's bytes, as v2 reports its hash.
    const [output] = (await waitForJob(v2(), job.prompt_id, 'succeeded')).outputs;
    expect(entry.outputs).toEqual({ s: { images: [{ filename: `${output.hash.slice('blake3:'.length)}.png`, subfolder: '', type: 'output' }] } });
    expect(entry.meta).toEqual({ s: { node_id: 's', display_node: 's', parent_node: null, real_node_id: 's' } });
    expect(entry.status.status_str).toBe('success');
    expect(entry.status.completed).toBe(true);
    expect(entry.status.messages.map((m: any[]) => m[0])).toEqual(['execution_start', 'execution_cached', 'execution_success']);
    for (const [, data] of entry.status.messages) {
      expect(data.prompt_id).toBe(job.prompt_id);
      expect(Number.isInteger(data.timestamp)).toBe(true);
    }
    expect((await getJson(alice, `/history/${job.prompt_id}`)).body).toEqual(body);
  });

  it("failed and cancelled jobs: error status with the reference's execution_error / execution_interrupted", async () => {
    await start();
    const failed = await finish(failWorkflow, 'failed');
    const { body } = await getJson(alice, `/api/history/${failed.prompt_id}`);
    const { status, outputs } = body[failed.prompt_id];
    expect(outputs).toEqual({});
    expect(status.status_str).toBe('error');
    expect(status.completed).toBe(false);
    const [start_, cached, [type, error]] = status.messages;
    expect(start_[0]).toBe('execution_start');
    expect(cached).toEqual(['execution_cached', { nodes: [], prompt_id: failed.prompt_id, timestamp: start_[1].timestamp }]);
    expect(type).toBe('execution_error');
    expect(error).toMatchObject({
      prompt_id: failed.prompt_id,
      node_id: 'f2',
      node_type: 'Fail',
      exception_type: 'TypeError',
      exception_message: expect.stringContaining('cannot do that'),
      executed: [],
      current_inputs: {},
      current_outputs: [],
    });
    expect(Array.isArray(error.traceback)).toBe(true);

    const running = await promptOk(alice, waitWorkflow(1, 60_000));
    await waitForJob(v2(), running.prompt_id, 'running');
    const pending = await promptOk(alice, waitWorkflow(2, 60_000));
    // Neither is finished: no history yet.
    expect((await getJson(alice, `/api/history/${running.prompt_id}`)).body).toEqual({});
    expect((await getJson(alice, `/api/history/${pending.prompt_id}`)).body).toEqual({});
    await cancelJob(v2(), pending.prompt_id);
    await cancelJob(v2(), running.prompt_id);
    await waitForJob(v2(), running.prompt_id, 'canceled');
    const ran = (await getJson(alice, `/api/history/${running.prompt_id}`)).body[running.prompt_id].status;
    expect(ran).toMatchObject({ status_str: 'error', completed: false });
    expect(ran.messages.map((m: any[]) => m[0])).toEqual(['execution_start', 'execution_cached', 'execution_interrupted']);
    const never = (await getJson(alice, `/api/history/${pending.prompt_id}`)).body[pending.prompt_id].status;
    expect(never).toEqual({ status_str: 'error', completed: false, messages: [] });
  });

  it('GET /api/history: finished jobs only, newest first, max_items (at most 1000) and offset; bad values 400', async () => {
    await start();
    const done = [];
    for (let i = 1; i <= 3; i++) done.push((await finish(sumWorkflow('n', i))).prompt_id);
    const running = await promptOk(alice, waitWorkflow(1, 60_000));
    await waitForJob(v2(), running.prompt_id, 'running');
    const all = await getJson(alice, '/api/history');
    expect(all.res.status).toBe(200);
    expect(Object.keys(all.body)).toEqual([...done].reverse());
    expect(Object.keys((await getJson(alice, '/history?max_items=2')).body)).toEqual([done[2], done[1]]);
    expect(Object.keys((await getJson(alice, '/api/history?max_items=2&offset=2')).body)).toEqual([done[0]]);
    expect((await getJson(alice, '/api/history?offset=3')).body).toEqual({});
    // Any larger number is a page of the most, 1000, as clients ask for "everything" with a big one.
    for (const big of ['max_items=1001', `max_items=${2 ** 53 + 2}`])
      expect(Object.keys((await getJson(alice, `/history?${big}`)).body)).toEqual([...done].reverse());
    for (const bad of ['max_items=0', 'max_items=two', 'offset=-1', 'offset=0.5']) {
      const r = await getJson(alice, `/api/history?${bad}`);
      expectCloudError(r, 400, 'invalid_request');
      expect(r.body.message).toContain(bad.split('=')[0]);
    }
  });

  it("one account never sees another's history; expired jobs leave it; unknown ids give {}", async () => {
    const clock = testClock(Date.now());
    await start({ now: clock.now, jobRetentionSeconds: 3600 });
    const job = await finish(sumWorkflow('a'));
    expect((await getJson(bob, '/api/history')).body).toEqual({});
    expect((await getJson(bob, `/api/history/${job.prompt_id}`)).body).toEqual({});
    for (const id of [crypto.randomUUID(), 'not-an-id']) expect((await getJson(alice, `/api/history/${id}`)).body).toEqual({});
    expectCloudError(await getJson(h, '/api/history'), 401, 'unauthorized');
    expect(Object.keys((await getJson(alice, '/api/history')).body)).toEqual([job.prompt_id]);
    clock.advance(3600_000);
    expect((await getJson(alice, '/api/history')).body).toEqual({});
    expect((await getJson(alice, `/api/history/${job.prompt_id}`)).body).toEqual({});
  });
});

describe.each(MODES)("POST /api/history: delete and clear take finished jobs out of the caller's history (%s)", (mode) => {
  let h: CloudJobsHarness;
  let alice: CloudJobsHarness;
  let bob: CloudJobsHarness;
  afterEach(async () => h?.close());
  const v2 = () => asKey(h, 'key-alice');
  const finish = async (as: CloudJobsHarness, key: string, workflow: Record<string, unknown>) => {
    const body = await promptOk(as, workflow);
    await waitForJob(asKey(h, key), body.prompt_id, 'succeeded');
    return body.prompt_id as string;
  };
  const historyIds = async (as: CloudJobsHarness) => Object.keys((await getJson(as, '/api/history')).body);
  /** POST /history (under /api or bare): the status and the body's bytes, which the reference leaves empty. */
  const manage = async (as: CloudJobsHarness, path: string, body: unknown) => {
    const res = await as.fetch(path, { method: 'POST', body: JSON.stringify(body) });
    return { status: res.status, body: await res.text() };
  };

  it("delete hides the named finished jobs, clear all of them; only the caller's; a running job stays; the jobs and outputs stay", async () => {
    h = await startCloudJobs(mode, { accounts: ACCOUNTS });
    alice = asCloud(h, 'key-alice');
    bob = asCloud(h, 'key-bob');
    const [a1, a2, a3] = [
      await finish(alice, 'key-alice', saveImageWorkflow()),
      await finish(alice, 'key-alice', sumWorkflow('n', 2)),
      await finish(alice, 'key-alice', sumWorkflow('n', 3)),
    ];
    const b1 = await finish(bob, 'key-bob', sumWorkflow('b', 1));
    const running = await promptOk(alice, waitWorkflow(1, 600_000));
    await waitForJob(v2(), running.prompt_id, 'running');

    // Named: a1 (with its upper-case spelling), bob's job, the running one, and ids of nothing.
    const named = [a1.toUpperCase(), b1, running.prompt_id, crypto.randomUUID(), 'not-an-id'];
    expect(await manage(alice, '/api/history', { delete: named })).toEqual({ status: 200, body: '' });
    expect(await historyIds(alice)).toEqual([a3, a2]);
    expect((await getJson(alice, `/api/history/${a1}`)).body).toEqual({});
    expect(await historyIds(bob)).toEqual([b1]);
    // Out of the history is not gone: the job, its status and its output are all still there.
    const job = await waitForJob(v2(), a1, 'succeeded');
    expect((await getJson(alice, `/api/job/${a1}/status`)).body.status).toBe('completed');
    expect((await h.fetch(job.outputs[0].url)).status).toBe(200);

    // Bare, as the reference's clients send it (no Content-Type): clear takes the rest.
    expect(await manage(alice, '/history', { clear: true })).toEqual({ status: 200, body: '' });
    expect((await getJson(alice, '/history')).body).toEqual({});
    expect(await historyIds(bob)).toEqual([b1]);
    // The running job was not in the history yet: it shows up when it ends.
    await cancelJob(v2(), running.prompt_id);
    await waitForJob(v2(), running.prompt_id, 'canceled');
    expect(await historyIds(alice)).toEqual([running.prompt_id]);
    expect(Object.keys((await getJson(alice, `/api/history/${running.prompt_id}`)).body)).toEqual([running.prompt_id]);
    // Both at once, and an empty body, are fine too.
    expect(await manage(alice, '/api/history', { delete: [a2], clear: true })).toEqual({ status: 200, body: '' });
    expect(await historyIds(alice)).toEqual([]);
    const empty = await alice.fetch('/api/history', { method: 'POST' });
    expect({ status: empty.status, body: await empty.text() }).toEqual({ status: 200, body: '' });
  });

  it('a bad body is 400 in the cloud shape; a key is required', async () => {
    h = await startCloudJobs(mode, { accounts: ACCOUNTS });
    alice = asCloud(h, 'key-alice');
    for (const bad of [{ clear: 'yes' }, { delete: 'x' }, { delete: [1] }, { wipe: true }, [1]]) {
      expectCloudError(await postJson(alice, '/api/history', bad), 400, 'invalid_request');
    }
    expectCloudError(await postJson(alice, '/api/history', '{not json'), 400, 'malformed_request');
    expectCloudError(await postJson(h, '/api/history', { clear: true }), 401, 'unauthorized');
  });
});

describe.each(MODES)("the reference's routes with nothing behind them: /free, /extensions, /embeddings (%s)", (mode) => {
  let h: CloudJobsHarness;
  afterEach(async () => h?.close());

  it('POST /free is 200 with an empty body; GET /extensions and /embeddings are [] (under /api and bare)', async () => {
    h = await startCloudJobs(mode, { accounts: ACCOUNTS });
    const alice = asCloud(h, 'key-alice');
    for (const prefix of ['/api', '']) {
      const free = await alice.fetch(`${prefix}/free`, { method: 'POST', body: JSON.stringify({ unload_models: true, free_memory: true }) });
      expect({ status: free.status, body: await free.text() }).toEqual({ status: 200, body: '' });
      for (const path of ['/extensions', '/embeddings']) {
        const res = await h.fetch(prefix + path);
        expect({ path, status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual({
          path,
          status: 200,
          type: 'application/json',
          body: '[]',
        });
      }
    }
    expectCloudError(await postJson(h, '/free', { unload_models: true }), 401, 'unauthorized');
    expectCloudError(await postJson(alice, '/free', [true]), 400, 'invalid_request');
  });
});

describe.each(MODES)('GET /api/system_stats and /api/features (%s)', (mode) => {
  let h: CloudJobsHarness;
  afterEach(async () => h?.close());

  it('system_stats is public and has every required field of the contract', async () => {
    h = await startCloudJobs(mode, { accounts: ACCOUNTS });
    for (const path of ['/api/system_stats', '/system_stats']) {
      const { res, body } = await getJson(h, path);
      expect(res.status).toBe(200);
      expect(body.devices).toEqual([]);
      expect(body.system).toMatchObject({
        os: expect.any(String),
        python_version: expect.any(String),
        embedded_python: false,
        comfyui_version: SERVICE_VERSION,
        pytorch_version: expect.any(String),
        argv: [],
        ram_total: expect.any(Number),
        ram_free: expect.any(Number),
      });
    }
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    expect(SERVICE_VERSION).toBe(pkg.version);
  });

  it('features: preview metadata and the upload limit, with or without a key', async () => {
    h = await startCloudJobs(mode, { accounts: ACCOUNTS, maxUploadBytes: 12345 });
    for (const who of [h, asCloud(h, 'key-alice')]) {
      const { res, body } = await getJson(who, '/api/features');
      expect(res.status).toBe(200);
      expect(body).toEqual({ supports_preview_metadata: true, max_upload_size: 12345 });
    }
    expect((await getJson(h, '/features')).body.max_upload_size).toBe(12345);
  });
});
