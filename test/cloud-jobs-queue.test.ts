// GET/POST /api/queue and POST /api/interrupt (and bare): the caller's queue
// as reference items, cancels of pending and running jobs by id, clearing
// the pending ones, interrupting running ones, bad bodies, and one account
// never seeing nor touching another's queue.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { type CloudJobsHarness, expectCloudError, getJson, postJson, promptOk, startCloudAccounts } from './helpers/cloud-jobs.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, jobNow, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';

const LONG = 60_000;

describe.each(MODES)('cloud queue and interrupt (%s)', (mode) => {
  let h: CloudJobsHarness;
  let alice: CloudJobsHarness;
  let bob: CloudJobsHarness;
  const start = async (options: Partial<ServiceOptions> = {}) => {
    ({ h, alice, bob } = await startCloudAccounts(mode, options));
  };
  afterEach(async () => h?.close());
  const statusOf = async (key: string, id: string) => (await jobNow(asKey(h, key), id)).status;
  /** A long job of alice's that is running now. */
  const runningJob = async (who = alice, key = 'key-alice', value = 1) => {
    const { prompt_id } = await promptOk(who, waitWorkflow(value, LONG));
    await waitForJob(asKey(h, key), prompt_id, 'running');
    return prompt_id;
  };

  it("GET /api/queue: the caller's running and pending jobs, oldest first, as [number, prompt_id, workflow, outputs, {create_time}]", async () => {
    await start();
    const running = await runningJob();
    const p1 = await promptOk(alice, waitWorkflow(2, LONG));
    const p2 = await promptOk(alice, waitWorkflow(3, LONG));
    const theirs = await runningJob(bob, 'key-bob', 9);

    const { res, body } = await getJson(alice, '/api/queue');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(body).sort()).toEqual(['queue_pending', 'queue_running']);
    expect(body.queue_running.map((item: any[]) => item[1])).toEqual([running]);
    expect(body.queue_pending.map((item: any[]) => item[1])).toEqual([p1.prompt_id, p2.prompt_id]);
    const [number, id, workflow, outputs, meta] = body.queue_pending[0];
    expect(number).toBe(p1.number);
    expect(id).toBe(p1.prompt_id);
    expect(workflow).toEqual(waitWorkflow(2, LONG));
    expect(outputs).toEqual(['w3']);
    expect(Object.keys(meta)).toEqual(['create_time']);
    expect(Number.isInteger(meta.create_time)).toBe(true);
    expect(Math.abs(meta.create_time - Date.now())).toBeLessThan(60_000);
    expect(body.queue_pending[1][0]).toBeGreaterThan(number);

    const { body: theirQueue } = await getJson(bob, '/queue');
    expect(theirQueue.queue_running.map((item: any[]) => item[1])).toEqual([theirs]);
    expect(theirQueue.queue_pending).toEqual([]);
    expectCloudError(await getJson(h, '/api/queue'), 401, 'unauthorized');
  });

  it("POST /api/queue delete: cancels the caller's pending and running jobs named, skips the rest", async () => {
    await start();
    const running = await runningJob();
    const pending = (await promptOk(alice, waitWorkflow(2, LONG))).prompt_id;
    const kept = (await promptOk(alice, waitWorkflow(3, LONG))).prompt_id;
    const theirs = await runningJob(bob, 'key-bob', 9);
    const { res, body } = await postJson(alice, '/api/queue', {
      delete: [pending, running, theirs, crypto.randomUUID(), 'garbage', pending],
    });
    expect(res.status).toBe(200);
    expect(body).toEqual({ deleted: [pending, running], cleared: false });
    expect(await statusOf('key-alice', pending)).toBe('canceled');
    await waitForJob(asKey(h, 'key-alice'), running, 'canceled');
    expect(await statusOf('key-bob', theirs)).toBe('running');
    // Already canceled: nothing more to delete.
    expect((await postJson(alice, '/queue', { delete: [pending] })).body).toEqual({ deleted: [], cleared: false });
    // The one left moves up and runs.
    await waitForJob(asKey(h, 'key-alice'), kept, 'running');
  });

  it("POST /api/queue clear: cancels every pending job of the caller, not the running one, not another account's", async () => {
    await start({ tierLimits: { free: 1 } });
    const running = await runningJob();
    const pending = [];
    for (let i = 2; i <= 4; i++) pending.push((await promptOk(alice, waitWorkflow(i, LONG))).prompt_id);
    await runningJob(bob, 'key-bob', 9);
    const theirs = (await promptOk(bob, waitWorkflow(10, LONG))).prompt_id;
    const { res, body } = await postJson(alice, '/api/queue', { clear: true });
    expect(res.status).toBe(200);
    expect(body.cleared).toBe(true);
    expect([...body.deleted].sort()).toEqual([...pending].sort());
    for (const id of pending) expect(await statusOf('key-alice', id)).toBe('canceled');
    expect(await statusOf('key-alice', running)).toBe('running');
    expect(await statusOf('key-bob', theirs)).toBe('queued');
    expect((await getJson(alice, '/api/queue')).body.queue_pending).toEqual([]);
    expect((await postJson(alice, '/api/queue', { clear: true })).body).toEqual({ deleted: [], cleared: true });
    // An empty body, or none, changes nothing.
    expect((await postJson(alice, '/api/queue', {})).body).toEqual({ deleted: [], cleared: false });
    const none = await h.fetch('/api/queue', { method: 'POST', headers: { 'x-api-key': 'key-alice' } });
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ deleted: [], cleared: false });
  });

  it('POST /api/queue refuses bad bodies with 400 and the field', async () => {
    await start();
    const pending = (await promptOk(alice, waitWorkflow(1, LONG))).prompt_id;
    expectCloudError(await postJson(alice, '/api/queue', '{"delete": ['), 400, 'malformed_request');
    for (const [body, field] of [
      [[pending], '(body)'],
      ['"clear"', '(body)'],
      [{ delete: pending }, 'delete'],
      [{ delete: [1] }, 'delete.0'],
      [{ clear: 'yes' }, 'clear'],
      [{ delete: [], purge: true }, 'purge'],
      [{ delete: Array.from({ length: 1001 }, () => crypto.randomUUID()) }, 'delete'],
    ] as const) {
      const r = await postJson(alice, '/api/queue', body);
      expectCloudError(r, 400, 'invalid_request');
      expect(r.body.details.field).toBe(field);
    }
    expect(await statusOf('key-alice', pending)).not.toBe('canceled');
    expectCloudError(await postJson(h, '/api/queue', { clear: true }), 401, 'unauthorized');
  });

  it("POST /api/interrupt: the caller's running jobs (or only prompt_id if running), never pending ones or another's", async () => {
    await start({ tierLimits: { free: 2 } });
    const r1 = await runningJob(alice, 'key-alice', 1);
    const r2 = await runningJob(alice, 'key-alice', 2);
    const pending = (await promptOk(alice, waitWorkflow(3, LONG))).prompt_id;
    const theirs = await runningJob(bob, 'key-bob', 9);

    // Named but not running (pending, another account's, unknown): nothing happens.
    for (const prompt_id of [pending, theirs, crypto.randomUUID(), 'nope']) {
      const { res, body } = await postJson(alice, '/api/interrupt', { prompt_id });
      expect(res.status).toBe(200);
      expect(body).toEqual({});
    }
    expect(await statusOf('key-alice', pending)).toBe('queued');
    expect(await statusOf('key-bob', theirs)).toBe('running');

    expect((await postJson(alice, '/api/interrupt', { prompt_id: r1 })).res.status).toBe(200);
    await waitForJob(asKey(h, 'key-alice'), r1, 'canceled');
    expect(await statusOf('key-alice', r2)).toBe('running');
    // The pending job takes r1's slot; with no prompt_id every running job of the caller stops.
    await waitForJob(asKey(h, 'key-alice'), pending, 'running');
    const all = await h.fetch('/interrupt', { method: 'POST', headers: { 'x-api-key': 'key-alice' } });
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual({});
    await waitForJob(asKey(h, 'key-alice'), r2, 'canceled');
    await waitForJob(asKey(h, 'key-alice'), pending, 'canceled');
    expect(await statusOf('key-bob', theirs)).toBe('running');
  });

  it('POST /api/interrupt refuses bad bodies and unauthenticated callers', async () => {
    await start();
    const running = await runningJob();
    expectCloudError(await postJson(alice, '/api/interrupt', '{'), 400, 'malformed_request');
    for (const body of [{ prompt_id: 5 }, [running], '"x"']) expectCloudError(await postJson(alice, '/api/interrupt', body), 400, 'invalid_request');
    expectCloudError(await postJson(h, '/api/interrupt', {}), 401, 'unauthorized');
    expect(await statusOf('key-alice', running)).toBe('running');
  });
});
