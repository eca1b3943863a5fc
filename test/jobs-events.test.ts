// GET /api/v2/jobs/{id}/events read as a client reads it: the body stream,
// parsed into SSE frames. Snapshot on connect, live transitions, throttled
// progress, outputs, the end of the stream, keepalives, the per-account cap on
// open streams, and clients that go away.
import { afterEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import type { ServiceOptions } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { expectEnvelope } from './helpers/assets.ts';
import { MODES } from './helpers/harness.ts';
import {
  asKey,
  cancelJob,
  expectJobShape,
  expectOutputShape,
  expectProgressShape,
  type JobsHarness,
  jobNow,
  sleep,
  startJobs,
  submitOk,
  TERMINAL,
  waitForJob,
} from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';
import { brief, eventsOf, openEvents, type SseReader } from './helpers/sse-client.ts';

/** Number -> Wait (`ms`) -> EmptyImage (width from the Wait) -> SaveImage: an output committed after a delay. */
function delayedImage(ms = 150): Workflow {
  return {
    n: { class_type: 'Number', inputs: { value: 3 } },
    w: { class_type: 'Wait', inputs: { value: ['n', 0], ms, steps: 1 } },
    e: { class_type: 'EmptyImage', inputs: { width: ['w', 0], height: 2, batch_size: 1, color: 0x00ff00 } },
    s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'sse' } },
  };
}

const EVENT_TYPES = ['status', 'progress', 'output', 'preview'];

/** Opens the stream and expects 200 text/event-stream; returns the reader. */
async function stream(h: JobsHarness, id: string, init: RequestInit = {}): Promise<SseReader> {
  const { res, sse } = await openEvents(h, id, init);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(res.headers.get('cache-control')).toContain('no-cache');
  return sse!;
}

/** Two SaveImage outputs, committed one after the other. */
function twoImages(): Workflow {
  return {
    n: { class_type: 'Number', inputs: { value: 3 } },
    e1: { class_type: 'EmptyImage', inputs: { width: ['n', 0], height: 2, batch_size: 1, color: 0xff0000 } },
    s1: { class_type: 'SaveImage', inputs: { images: ['e1', 0], filename_prefix: 'one' } },
    e2: { class_type: 'EmptyImage', inputs: { width: ['n', 0], height: 3, batch_size: 1, color: 0x0000ff } },
    s2: { class_type: 'SaveImage', inputs: { images: ['e2', 0], filename_prefix: 'two' } },
  };
}

/** Every event must be known and carry JSON; the statuses must only move forward. */
function checkSequence(items: ReturnType<typeof eventsOf>): void {
  const order = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled'];
  let last = -1;
  for (const e of items) {
    expect(EVENT_TYPES).toContain(e.event);
    expect(e.json, e.data).toBeDefined();
    if (e.event === 'status') {
      const at = order.indexOf(e.json.status);
      expect(at, `status ${e.json.status} after ${order[last]}`).toBeGreaterThanOrEqual(last);
      last = at;
    }
  }
}

describe.each(MODES)('GET /api/v2/jobs/{id}/events (%s)', (mode) => {
  let h: JobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  it('status first (the full Job), throttled full progress, terminal status last, then the stream ends', async () => {
    await start();
    const job = await submitOk(h, waitWorkflow(1, 50, 20));
    const sse = await stream(h, job.id);
    const items = await sse.readToEnd(8_000);
    const events = eventsOf(items);
    checkSequence(events);

    expect(events[0].event).toBe('status');
    expectJobShape(events[0].json);
    expect(events[0].json.id).toBe(job.id);
    expect(['queued', 'running']).toContain(events[0].json.status);

    const progress = events.filter((e) => e.event === 'progress');
    for (const p of progress) expectProgressShape(p.json);
    // 20 steps over about a second, at most ~2 a second.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThan(10);
    const values = progress.map((p) => p.json.value);
    expect([...values].sort((a, b) => a - b)).toEqual(values);

    const last = events.at(-1)!;
    expect(last.event).toBe('status');
    expectJobShape(last.json);
    expect(last.json).toMatchObject({ id: job.id, status: 'succeeded', error: null });
    expect(last.json.progress.value).toBe(1);
    expect(events.filter((e) => e.event === 'status' && TERMINAL.includes(e.json.status))).toHaveLength(1);
    expect(sse.done).toBe(true);
    expect(await sse.next(500)).toBeNull();
  });

  it('a queued job streams queued, then running, then succeeded', async () => {
    await start();
    const first = await submitOk(h, waitWorkflow(1, 20, 10));
    await waitForJob(h, first.id, 'running');
    const second = await submitOk(h, waitWorkflow(2, 10, 2));
    const sse = await stream(h, second.id);
    const events = eventsOf(await sse.readToEnd(5_000));
    checkSequence(events);
    const statuses = events.filter((e) => e.event === 'status').map((e) => e.json.status);
    expect(statuses[0]).toBe('queued');
    expect(events[0].json.queue_position).toBe(0);
    expect(statuses).toContain('running');
    expect(statuses.at(-1)).toBe('succeeded');
    for (const e of events.filter((x) => x.event === 'status')) expectJobShape(e.json);
  });

  it('an output event carries the Output as it commits, before the terminal status', async () => {
    await start();
    const job = await submitOk(h, delayedImage(150));
    const sse = await stream(h, job.id);
    const events = eventsOf(await sse.readToEnd(5_000));
    checkSequence(events);
    const outputs = events.filter((e) => e.event === 'output');
    expect(outputs.length, JSON.stringify(events.map(brief))).toBeGreaterThanOrEqual(1);
    expectOutputShape(outputs[0].json, job.id);
    expect(outputs[0].json).toMatchObject({ node_id: 's', type: 'image', content_type: 'image/png' });
    const last = events.at(-1)!;
    expect(last.json.status).toBe('succeeded');
    expect(events.indexOf(outputs[0])).toBeLessThan(events.length - 1);
    expect(last.json.outputs.map((o: any) => o.id)).toEqual([outputs[0].json.id]);
    const fetched = await jobNow(h, job.id);
    expect(fetched.outputs.map((o: any) => o.id)).toEqual([outputs[0].json.id]);
  });

  it('a stream that saw every output commit ends on a status listing those outputs, without reading them again', async () => {
    const storage = createMemoryStorage();
    let reads = 0;
    const list = storage.metadata.listJobAssets.bind(storage.metadata);
    storage.metadata.listJobAssets = (...args) => (reads++, list(...args));
    await start({ storage, maxConcurrentJobs: 1 });
    // A job holding the one slot keeps the next queued until the stream is open.
    const blocker = await submitOk(h, waitWorkflow(1, 25, 4000));
    await waitForJob(h, blocker.id, 'running');
    const job = await submitOk(h, twoImages());
    const sse = await stream(h, job.id);
    expect((await sse.nextEvent())!.json.status).toBe('queued');
    reads = 0;
    await cancelJob(h, blocker.id);
    const events = eventsOf(await sse.readToEnd(10_000));
    checkSequence(events);
    const last = events.at(-1)!;
    expect(last.json.status).toBe('succeeded');
    expect(reads).toBe(0);
    const streamed = events.filter((e) => e.event === 'output').map((e) => e.json.id);
    expect(streamed).toHaveLength(2);
    // The same outputs, in the same order, as a read of the job gives.
    const fetched = await jobNow(h, job.id);
    const fields = (o: any) => ({ id: o.id, node_id: o.node_id, content_type: o.content_type, size: o.size, hash: o.hash, created_at: o.created_at });
    expect(last.json.outputs.map(fields)).toEqual(fetched.outputs.map(fields));
    expect(new Set(streamed)).toEqual(new Set(fetched.outputs.map((o: any) => o.id)));
  });

  it('an output deleted while its job runs: the terminal status reads the outputs again and leaves it out', async () => {
    await start();
    const job = await submitOk(h, {
      n: { class_type: 'Number', inputs: { value: 3 } },
      e1: { class_type: 'EmptyImage', inputs: { width: ['n', 0], height: 2, batch_size: 1, color: 0xff0000 } },
      s1: { class_type: 'SaveImage', inputs: { images: ['e1', 0], filename_prefix: 'first' } },
      // Runs after s1 (outputs run in workflow order) and holds the job until it is canceled.
      w: { class_type: 'Wait', inputs: { value: ['n', 0], ms: 25, steps: 4000 } },
      e2: { class_type: 'EmptyImage', inputs: { width: ['w', 0], height: 2, batch_size: 1, color: 0x0000ff } },
      s2: { class_type: 'SaveImage', inputs: { images: ['e2', 0], filename_prefix: 'second' } },
    });
    const sse = await stream(h, job.id);
    let first: any;
    while (!first) {
      const e = await sse.nextEvent(10_000);
      expect(e, 'the stream ended before the first output').not.toBeNull();
      if (e!.event === 'output') first = e!.json;
      // A stream that connects after the output was stored has it in its first status instead.
      else if (e!.event === 'status' && e!.json.outputs.length > 0) first = e!.json.outputs[0];
    }
    expect((await h.fetch(`/api/v2/assets/${first.id}`, { method: 'DELETE' })).status).toBe(204);
    await cancelJob(h, job.id);
    const last = eventsOf(await sse.readToEnd(10_000)).at(-1)!;
    expect(last.json.status).toBe('canceled');
    expect(last.json.outputs).toEqual([]);
    expect((await jobNow(h, job.id)).outputs).toEqual([]);
  });

  it('a job canceled while streaming ends the stream with status canceled', async () => {
    await start();
    const job = await submitOk(h, waitWorkflow(1, 25, 40));
    await waitForJob(h, job.id, 'running');
    const sse = await stream(h, job.id);
    expect((await sse.nextEvent())!.event).toBe('status');
    await cancelJob(h, job.id);
    const events = eventsOf(await sse.readToEnd(3_000));
    checkSequence(events);
    const last = events.at(-1)!;
    expect(last.event).toBe('status');
    expect(last.json).toMatchObject({ status: 'canceled', error: null });
  });

  it('connecting to a finished job gives its progress snapshot, then its status last, then the stream ends', async () => {
    await start();
    const job = await waitForJob(h, (await submitOk(h, waitWorkflow(1, 1, 3))).id, 'succeeded');
    expect(job.progress).toMatchObject({ value: 1 });
    for (let i = 0; i < 2; i++) {
      const sse = await stream(h, job.id);
      const events = eventsOf(await sse.readToEnd(2_000));
      // The contract: the stream ends after the terminal status, so nothing follows it.
      expect(events.map((e) => e.event)).toEqual(['progress', 'status']);
      expect(events[0].json).toEqual(job.progress);
      expectJobShape(events[1].json);
      expect(events[1].json).toMatchObject({ id: job.id, status: 'succeeded' });
      expect(sse.done).toBe(true);
    }
  });

  it('a job canceled while a new stream reads its row: the stream starts from the cancel, not the row it read first', async () => {
    const memory = createMemoryStorage();
    /** Runs once, after the next read of a row that is not finished yet, before that row is handed on. */
    let meanwhile: (() => Promise<void>) | undefined;
    const getJob: typeof memory.metadata.getJob = async (accountId, id) => {
      const row = await memory.metadata.getJob(accountId, id);
      const hook = meanwhile;
      if (hook && row && !TERMINAL.includes(row.status)) {
        meanwhile = undefined;
        await hook();
      }
      return row;
    };
    await start({ storage: { ...memory, metadata: { ...memory.metadata, getJob } } });
    const job = await submitOk(h, waitWorkflow(1, 60_000));
    let canceled: string | undefined;
    // The cancel moves the row and tells the hub before it answers: its event comes between the stream's read and its listening.
    meanwhile = async () => {
      canceled = (await cancelJob(h, job.id)).body.status;
    };
    const sse = await stream(h, job.id);
    const statuses = eventsOf(await sse.readToEnd(8_000))
      .filter((e) => e.event === 'status')
      .map((e) => e.json.status);
    expect(meanwhile).toBeUndefined();
    expect(['canceling', 'canceled']).toContain(canceled);
    // What the cancel left (the run may have finished it since), never the row from before it.
    expect(['canceling', 'canceled']).toContain(statuses[0]);
    expect(statuses.at(-1)).toBe('canceled');
  });

  it('keepalive comments every sseKeepaliveMs on a long job', async () => {
    await start({ sseKeepaliveMs: 50 });
    const job = await submitOk(h, waitWorkflow(1, 50, 10));
    const sse = await stream(h, job.id);
    const items = await sse.readToEnd(5_000);
    const keepalives = items.filter((i) => i.kind === 'comment' && i.text === 'keepalive');
    expect(keepalives.length, JSON.stringify(items.map(brief))).toBeGreaterThanOrEqual(2);
    expect(eventsOf(items).at(-1)!.json.status).toBe('succeeded');
  });

  it('too_many_streams: 429 with Retry-After past maxEventStreams; a canceled reader frees its slot', async () => {
    await start({ maxEventStreams: 1 });
    const job = await submitOk(h, waitWorkflow(1, 25, 60));
    const first = await stream(h, job.id);
    expect((await first.nextEvent())!.event).toBe('status');

    const refused = await openEvents(h, job.id);
    const retryAfter = refused.res.headers.get('retry-after');
    await expectEnvelope(refused.res, 429, 'too_many_streams');
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    // Polling is never limited.
    expect((await h.fetch(`/api/v2/jobs/${job.id}`)).status).toBe(200);

    await first.cancel();
    let again: Awaited<ReturnType<typeof openEvents>> | undefined;
    const deadline = Date.now() + 2_000;
    for (;;) {
      again = await openEvents(h, job.id);
      if (again.res.status === 200 || Date.now() > deadline) break;
      await again.res.body?.cancel();
      await sleep(20);
    }
    expect(again.res.status).toBe(200);
    expect((await again.sse!.nextEvent())!.event).toBe('status');

    // A stream that ends with its job frees its slot too.
    await cancelJob(h, job.id);
    await again.sse!.readToEnd(3_000);
    await sleep(50);
    const after = await stream(h, job.id);
    await after.readToEnd(2_000);
    await sleep(50);
    await (await stream(h, job.id)).readToEnd(2_000);
  });

  it('the stream cap is per account', async () => {
    await start({
      maxEventStreams: 1,
      accounts: [
        { id: 'alice', apiKeys: ['ka'] },
        { id: 'bob', apiKeys: ['kb'] },
      ],
    });
    const alice = asKey(h, 'ka');
    const bob = asKey(h, 'kb');
    const aJob = await submitOk(alice, waitWorkflow(1, 25, 40));
    const bJob = await submitOk(bob, waitWorkflow(2, 25, 40));
    const a = await stream(alice, aJob.id);
    await a.nextEvent();
    const b = await stream(bob, bJob.id);
    expect((await b.nextEvent())!.json.id).toBe(bJob.id);
    await expectEnvelope((await openEvents(alice, aJob.id)).res, 429, 'too_many_streams');
    await a.cancel();
    await b.cancel();
    await cancelJob(alice, aJob.id);
    await cancelJob(bob, bJob.id);
    await waitForJob(alice, aJob.id, 'canceled');
    await waitForJob(bob, bJob.id, 'canceled');
  });

  it('404 not_found for an unknown job', async () => {
    await start();
    await expectEnvelope((await openEvents(h, crypto.randomUUID())).res, 404, 'not_found');
    await expectEnvelope((await openEvents(h, 'not-an-id')).res, 404, 'not_found');
  });

  it('clients that go away (reader canceled, request aborted) do not disturb the job or the service', async () => {
    await start({ maxEventStreams: 2 });
    const job = await submitOk(h, waitWorkflow(1, 30, 10));
    const quitter = await stream(h, job.id);
    expect((await quitter.nextEvent())!.event).toBe('status');
    await quitter.cancel();

    const controller = new AbortController();
    const aborted = await stream(h, job.id, { signal: controller.signal });
    expect((await aborted.nextEvent())!.event).toBe('status');
    controller.abort();

    const done = await waitForJob(h, job.id, 'succeeded', 5_000);
    expect(done.error).toBeNull();
    // Both slots came back, and the service still serves streams and jobs.
    await sleep(50);
    const s1 = await stream(h, job.id);
    const s2 = await stream(h, job.id);
    expect(eventsOf(await s1.readToEnd(2_000)).at(-1)!.json.status).toBe('succeeded');
    expect(eventsOf(await s2.readToEnd(2_000)).at(-1)!.json.status).toBe('succeeded');
    const next = await waitForJob(h, (await submitOk(h, sumWorkflow('n'))).id, 'succeeded');
    expect(next.error).toBeNull();
  });
});
