// POST /api/v2/jobs: the Job a submission answers, workflows that run to
// their end (numbers, images saved as PNG assets, an uploaded image loaded by
// asset reference), Idempotency-Key, the bounded queue, credits, and what one
// account can see of another's jobs and assets.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { decodePng } from '../lib/png/index.ts';
import { blake3Of, bytesOf, expectEnvelope, ISO, upload } from './helpers/assets.ts';
import { MODES } from './helpers/harness.ts';
import {
  asKey,
  assetRef,
  cancelJob,
  expectJobShape,
  expectOutputShape,
  getJob,
  type JobsHarness,
  jobNow,
  PNG_SIGNATURE,
  saveImageWorkflow,
  startJobs,
  submit,
  submitOk,
  waitForJob,
} from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';
import { openEvents } from './helpers/sse-client.ts';
import { buildPng } from './local-engine/png-fixtures.ts';

const WEEK_MS = 604800 * 1000;
const key = () => crypto.randomUUID();

/** A 2x2 RGB PNG with four different pixels, written by an independent encoder. */
const fixturePixels = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [10, 20, 30],
];
const fixturePng = () => new Uint8Array(buildPng({ width: 2, height: 2, colorType: 2, bitDepth: 8, samples: fixturePixels.flat() }));

function pixels(bytes: Uint8Array): number[][] {
  const png = decodePng(bytes);
  const out: number[][] = [];
  for (let p = 0; p < png.width * png.height; p++) out.push([0, 1, 2].map((c) => Math.round(png.data[p * png.channels + c] * 255)));
  return out;
}

const accounts = [
  { id: 'alice', tier: 'free', apiKeys: ['key-alice'] },
  { id: 'bob', tier: 'free', apiKeys: ['key-bob'] },
];

describe.each(MODES)('POST /api/v2/jobs (%s)', (mode) => {
  let h: JobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  it('answers 201 with every field of the Job, typed', async () => {
    await start();
    const before = Date.now();
    const { res, body: job } = await submit(h, { workflow: sumWorkflow('n') });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expectJobShape(job);
    expect(['queued', 'running']).toContain(job.status);
    const created = Date.parse(job.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(Date.now() + 1000);
    expect(Date.parse(job.expires_at) - created).toBe(WEEK_MS);
    expect(job.completed_at).toBeNull();
    expect(job.outputs).toEqual([]);
    expect(job.error).toBeNull();
    expect(job.metrics.execution_ms).toBeNull();
    if (job.status === 'queued') {
      expect(job.started_at).toBeNull();
      expect(job.metrics.queue_ms).toBeNull();
      expect(job.queue_position).toBe(0);
    }
    // The id is the one GET knows.
    expect((await jobNow(h, job.id)).id).toBe(job.id);
    await waitForJob(h, job.id, 'succeeded');
  });

  it('a sum workflow runs to succeeded, with full progress and metrics', async () => {
    await start();
    const submitted = await submitOk(h, sumWorkflow('n', 20, 22));
    const job = expectJobShape(await waitForJob(h, submitted.id, 'succeeded'));
    expect(job.error).toBeNull();
    expect(job.queue_position).toBeNull();
    expect(job.started_at).toMatch(ISO);
    expect(job.completed_at).toMatch(ISO);
    const [c, s, d] = [job.created_at, job.started_at, job.completed_at].map(Date.parse);
    expect(c).toBeLessThanOrEqual(s);
    expect(s).toBeLessThanOrEqual(d);
    expect(job.metrics).toEqual({ queue_ms: s - c, execution_ms: d - s });
    expect(job.progress).toMatchObject({ value: 1, nodes_total: 4, nodes_done: 4 });
    expect(h.runs).toMatchObject({ Number: 2, Add: 1, Show: 1 });
  });

  it('a SaveImage workflow commits PNG outputs: assets of the job, bytes as described', async () => {
    await start();
    const submitted = await submitOk(h, saveImageWorkflow(0x336699, 3, 2, 'jobs'));
    const job = expectJobShape(await waitForJob(h, submitted.id, 'succeeded'));
    expect(job.outputs).toHaveLength(1);
    const out = job.outputs[0];
    expectOutputShape(out, job.id);
    expect(out).toMatchObject({ node_id: 's', type: 'image', content_type: 'image/png', name: 'jobs_00001_.png' });

    // The signed url serves the bytes: a PNG of 3x2 pixels of the colour.
    const content = await h.fetch(out.url);
    expect(content.status).toBe(200);
    const bytes = await bytesOf(content);
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(bytes.length).toBe(out.size_bytes);
    expect(await blake3Of(bytes)).toBe(out.hash);
    expect(pixels(bytes)).toEqual(Array(6).fill([0x33, 0x66, 0x99]));

    // The asset record names its job.
    const asset = await h.fetch(`/api/v2/assets/${out.id}`);
    expect(asset.status).toBe(200);
    const record = (await asset.json()) as any;
    expect(record).toMatchObject({ id: out.id, job_id: job.id, content_type: 'image/png', size_bytes: out.size_bytes, hash: out.hash });
    const viaApi = await h.fetch(`/api/v2/assets/${out.id}/content`);
    expect([...(await bytesOf(viaApi)).subarray(0, 8)]).toEqual(PNG_SIGNATURE);
  });

  it('LoadImage takes a core/ASSET reference to an uploaded PNG', async () => {
    await start();
    const png = fixturePng();
    const up = await upload(h, png, { content_type: 'image/png', file_path: 'in.png' });
    expect(up.res.status).toBe(201);
    const workflow = {
      l: { class_type: 'LoadImage', inputs: { image: assetRef(up.body.id) } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'copy' } },
    };
    const submitted = await submitOk(h, workflow);
    const job = await waitForJob(h, submitted.id, 'succeeded');
    expect(job.outputs).toHaveLength(1);
    const bytes = await bytesOf(await h.fetch(job.outputs[0].url));
    expect(pixels(bytes)).toEqual(fixturePixels);
  });

  it('LoadImage takes a file name, or the content-addressed name history and /ws show', async () => {
    await start();
    const up = await upload(h, fixturePng(), { content_type: 'image/png', file_path: 'by-name.png' });
    const hashName = `${up.body.hash.slice('blake3:'.length)}.png`;
    for (const image of ['by-name.png', hashName]) {
      const workflow = {
        l: { class_type: 'LoadImage', inputs: { image } },
        s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'copy' } },
      };
      const job = await waitForJob(h, (await submitOk(h, workflow)).id, 'succeeded');
      expect(pixels(await bytesOf(await h.fetch(job.outputs[0].url)))).toEqual(fixturePixels);
    }
  });

  it('LoadImage loads the output of an earlier job by reference', async () => {
    await start();
    const first = await waitForJob(h, (await submitOk(h, saveImageWorkflow(0x102030, 2, 2))).id, 'succeeded');
    const workflow = {
      l: { class_type: 'LoadImage', inputs: { image: assetRef(first.outputs[0].id) } },
      i: { class_type: 'ImageInvert', inputs: { image: ['l', 0] } },
      s: { class_type: 'SaveImage', inputs: { images: ['i', 0], filename_prefix: 'inv' } },
    };
    const second = await waitForJob(h, (await submitOk(h, workflow)).id, 'succeeded');
    const bytes = await bytesOf(await h.fetch(second.outputs[0].url));
    expect(pixels(bytes)).toEqual(Array(4).fill([0xff - 0x10, 0xff - 0x20, 0xff - 0x30]));
  });

  it('Idempotency-Key: a second use is 422 idempotency_key_reuse and creates no job', async () => {
    await start();
    const k = key();
    const first = await submit(h, { workflow: sumWorkflow('n') }, { headers: { 'idempotency-key': k } });
    expect(first.res.status).toBe(201);
    await waitForJob(h, first.body.id, 'succeeded');
    const again = await expectEnvelope(
      await h.fetch('/api/v2/jobs', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': k },
        body: JSON.stringify({ workflow: sumWorkflow('m', 5, 6) }),
      }),
      422,
      'idempotency_key_reuse',
    );
    expect((again as any).id).toBeUndefined();
    // The same body again is refused too; nothing ran for either refusal.
    const same = await submit(h, { workflow: sumWorkflow('n') }, { headers: { 'idempotency-key': k } });
    expect(same.res.status).toBe(422);
    expect(same.body.error.code).toBe('idempotency_key_reuse');
    await new Promise((r) => setTimeout(r, 100));
    expect(h.runs.Add).toBe(1);
  });

  it('Idempotency-Key: a 422 validation failure releases the key', async () => {
    await start();
    const k = key();
    const bad = await submit(h, { workflow: { a: { class_type: 'Nope', inputs: {} } } }, { headers: { 'idempotency-key': k } });
    expect(bad.res.status).toBe(422);
    expect(bad.body.error.code).toBe('invalid_workflow');
    const good = await submit(h, { workflow: sumWorkflow('n') }, { headers: { 'idempotency-key': k } });
    expect(good.res.status).toBe(201);
    expectJobShape(good.body);
    const third = await submit(h, { workflow: sumWorkflow('n') }, { headers: { 'idempotency-key': k } });
    expect(third.res.status).toBe(422);
    expect(third.body.error.code).toBe('idempotency_key_reuse');
    await waitForJob(h, good.body.id, 'succeeded');
  });

  it('queue_full: 429 with Retry-After once maxQueueDepth jobs are queued; the key is released', async () => {
    await start({ maxQueueDepth: 1 });
    const running = await submitOk(h, waitWorkflow(1, 50, 40));
    await waitForJob(h, running.id, 'running');
    const queued = await submitOk(h, waitWorkflow(2, 10, 1));
    expect(queued.status).toBe('queued');
    expect(queued.queue_position).toBe(0);

    const k = key();
    const res = await h.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': k },
      body: JSON.stringify({ workflow: waitWorkflow(3, 10, 1) }),
    });
    const retryAfter = res.headers.get('retry-after');
    await expectEnvelope(res, 429, 'queue_full');
    expect(retryAfter).toMatch(/^[1-9]\d*$/);

    // Canceling the queued job frees the queue; the refused request's key works.
    expect((await cancelJob(h, queued.id)).body.status).toBe('canceled');
    const retry = await submit(h, { workflow: waitWorkflow(3, 10, 1) }, { headers: { 'idempotency-key': k } });
    expect(retry.res.status).toBe(201);
    await cancelJob(h, running.id);
    await waitForJob(h, running.id, 'canceled');
    await waitForJob(h, retry.body.id, 'succeeded');
  });

  it('insufficient_credits: 402 when the provider says no, for that account only; the key is released', async () => {
    const asked: string[] = [];
    const broke = new Set(['bob']);
    await start({ accounts, credits: { hasCredits: async (id) => (asked.push(id), !broke.has(id)) } });
    const bob = asKey(h, 'key-bob');
    const alice = asKey(h, 'key-alice');
    const k = key();
    const refused = await bob.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': k },
      body: JSON.stringify({ workflow: sumWorkflow('n') }),
    });
    await expectEnvelope(refused, 402, 'insufficient_credits');
    expect(asked).toContain('bob');
    const ok = await submit(alice, { workflow: sumWorkflow('n') });
    expect(ok.res.status).toBe(201);
    expect(asked).toContain('alice');

    broke.delete('bob');
    const retry = await submit(bob, { workflow: sumWorkflow('n') }, { headers: { 'idempotency-key': k } });
    expect(retry.res.status).toBe(201);
    await waitForJob(alice, ok.body.id, 'succeeded');
    await waitForJob(bob, retry.body.id, 'succeeded');
  });

  it("another account's job is 404 on GET, /workflow, /cancel and /events, and stays untouched", async () => {
    await start({ accounts });
    const alice = asKey(h, 'key-alice');
    const bob = asKey(h, 'key-bob');
    const job = await submitOk(alice, waitWorkflow(1, 20, 10));
    await expectEnvelope(await bob.fetch(`/api/v2/jobs/${job.id}`), 404, 'not_found');
    await expectEnvelope(await bob.fetch(`/api/v2/jobs/${job.id}/workflow`), 404, 'not_found');
    await expectEnvelope(await bob.fetch(`/api/v2/jobs/${job.id}/cancel`, { method: 'POST' }), 404, 'not_found');
    const events = await openEvents(bob, job.id);
    await expectEnvelope(events.res, 404, 'not_found');
    // Without a key at all: 401.
    expect((await h.fetch(`/api/v2/jobs/${job.id}`)).status).toBe(401);
    expect((await submit(h, { workflow: sumWorkflow('n') })).res.status).toBe(401);
    // Bob's cancel did nothing: the job runs to its end.
    const done = await waitForJob(alice, job.id, 'succeeded');
    expect(done.error).toBeNull();
  });

  it("a core/ASSET reference to another account's asset is 422 missing_asset", async () => {
    await start({ accounts });
    const alice = asKey(h, 'key-alice');
    const bob = asKey(h, 'key-bob');
    const up = await upload(alice, fixturePng(), { content_type: 'image/png', file_path: 'mine.png' });
    expect(up.res.status).toBe(201);
    const workflow = {
      l: { class_type: 'LoadImage', inputs: { image: assetRef(up.body.id) } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'x' } },
    };
    const res = await bob.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow }),
    });
    await expectEnvelope(res, 422, 'missing_asset');
    // Bob's own copy of the same bytes is his to use; Alice's reference works for Alice.
    const mine = await submitOk(alice, workflow);
    expect((await waitForJob(alice, mine.id, 'succeeded')).outputs).toHaveLength(1);
    expect((await getJob(bob, mine.id)).res.status).toBe(404);
    // Alice's output asset is not Bob's either.
    const out = (await jobNow(alice, mine.id)).outputs[0];
    const viaOutput = { l: { class_type: 'LoadImage', inputs: { image: assetRef(out.id) } }, s: workflow.s };
    const res2 = await bob.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: viaOutput }),
    });
    await expectEnvelope(res2, 422, 'missing_asset');
  });
});
