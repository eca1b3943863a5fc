// Additions to the v2 Job beyond the contract: `priority` (higher starts
// first within the account's queue, FIFO within a priority) and `metadata`
// (a caller's JSON object) given on POST /api/v2/jobs, and `outputs_reused`
// (the engine answered some of the job's nodes from an earlier run's
// results). Each is shown on every Job: the 201, GET, the listing, cancel and
// the SSE status snapshots; bad values are 422 invalid_request naming the
// field, and store nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import type { Engine } from '../engine/types.ts';
import { createService, type ServiceOptions, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { expectEnvelope } from './helpers/assets.ts';
import { MODES } from './helpers/harness.ts';
import {
  asKey,
  cancelJob,
  expectJobShape,
  type JobsHarness,
  jobNow,
  runJob,
  startJobs,
  submit,
  submitOk,
  until,
  waitForJob,
} from './helpers/jobs.ts';
import { createTestNodes, sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';
import { eventsOf, openEvents } from './helpers/sse-client.ts';

/** Keys are data: one that is special to JavaScript objects comes back as sent. */
const METADATA_JSON = '{"__proto__":{"polluted":true},"run":"batch-7","ü":"✓","n":null,"list":[1,{"deep":[2.5,false]}]}';

/** The local engine with the test nodes, telling `started` the id of each job it begins. */
function recordingEngine(started: string[]): Engine {
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });
  return { ...engine, execute: (job, ctx) => (started.push(job.id), engine.execute(job, ctx)) };
}

describe.each(MODES)('priority, metadata and outputs_reused on v2 jobs (%s)', (mode) => {
  let h: JobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  const postText = (text: string) => h.fetch('/api/v2/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });

  it('a job submitted without them shows priority 0, metadata null and outputs_reused false', async () => {
    await start();
    const created = expectJobShape(await submitOk(h, sumWorkflow('n')));
    expect(created).toMatchObject({ priority: 0, metadata: null, outputs_reused: false });
    const done = await waitForJob(h, created.id, 'succeeded');
    expect(done).toMatchObject({ priority: 0, metadata: null, outputs_reused: false });
  });

  it('metadata and priority are kept as sent and shown on the 201, GET, the listing, cancel and every SSE status', async () => {
    await start();
    const metadata = JSON.parse(METADATA_JSON);
    const blocker = await submitOk(h, waitWorkflow(1, 25, 400));
    await waitForJob(h, blocker.id, 'running');
    const res = await postText(`{"workflow":${JSON.stringify(sumWorkflow('n'))},"priority":-7,"metadata":${METADATA_JSON}}`);
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).toContain('"__proto__":{"polluted":true}');
    const created = expectJobShape(JSON.parse(text));
    expect(created).toMatchObject({ status: 'queued', priority: -7, metadata });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    expect(await jobNow(h, created.id)).toMatchObject({ priority: -7, metadata });
    const listed = await (await h.fetch('/api/v2/jobs?status=queued')).json();
    expect((listed as any).jobs).toEqual([expect.objectContaining({ id: created.id, priority: -7, metadata })]);

    // A stream opened while it is queued sees it through to the end.
    const { sse } = await openEvents(h, created.id);
    await cancelJob(h, blocker.id);
    const statuses = eventsOf(await sse!.readToEnd(10_000)).filter((e) => e.event === 'status');
    expect(statuses.map((e) => e.json.status)).toEqual(expect.arrayContaining(['queued', 'succeeded']));
    for (const e of statuses) expect(e.json).toMatchObject({ priority: -7, metadata, outputs_reused: expect.any(Boolean) });
    const canceled = await cancelJob(h, created.id); // finished: answers the terminal Job
    expect(canceled.body).toMatchObject({ status: 'succeeded', priority: -7, metadata });
  });

  it.each([
    ['metadata an array', { metadata: [1, 2] }, 'metadata'],
    ['metadata a string', { metadata: 'batch-7' }, 'metadata'],
    ['metadata a number', { metadata: 42 }, 'metadata'],
    ['metadata a boolean', { metadata: true }, 'metadata'],
    ['metadata nested 17 deep', { metadata: JSON.parse(`${'{"a":'.repeat(17)}1${'}'.repeat(17)}`) }, 'metadata'],
    ['metadata over 16 KiB as JSON', { metadata: { pad: 'x'.repeat(16 * 1024 - 9) } }, 'metadata'],
    ['metadata over 16 KiB in UTF-8 bytes', { metadata: { pad: 'é'.repeat(8 * 1024) } }, 'metadata'],
    ['priority a fraction', { priority: 1.5 }, 'priority'],
    ['priority a string', { priority: '5' }, 'priority'],
    ['priority a boolean', { priority: true }, 'priority'],
    ['priority an object', { priority: { value: 1 } }, 'priority'],
    ['priority above 1000000', { priority: 1_000_001 }, 'priority'],
    ['priority below -1000000', { priority: -1_000_001 }, 'priority'],
  ])('%s is 422 invalid_request naming the field, and stores nothing', async (_, extra, field) => {
    await start();
    const err = await expectEnvelope(
      await h.fetch('/api/v2/jobs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: sumWorkflow('n'), ...extra }),
      }),
      422,
      'invalid_request',
    );
    expect(err.error.details?.field).toBe(field);
    expect(err.error.message).toMatch(new RegExp(`^${field}: `));
    if (String(_).includes('16 KiB')) expect(err.error.details?.limit_bytes).toBe(16 * 1024);
    expect(await (await h.fetch('/api/v2/jobs')).json()).toEqual({ jobs: [], next_cursor: null });
  });

  it('a priority that JSON reads as Infinity is 422 too, not a 500', async () => {
    await start();
    const err = await expectEnvelope(await postText(`{"workflow":${JSON.stringify(sumWorkflow('n'))},"priority":1e400}`), 422, 'invalid_request');
    expect(err.error.details?.field).toBe('priority');
  });

  it('the bounds themselves, null for either, an empty object and exactly 16 KiB of metadata are accepted', async () => {
    await start({ runJobs: false });
    const exact = { pad: 'x'.repeat(16 * 1024 - 10) };
    expect(new TextEncoder().encode(JSON.stringify(exact)).length).toBe(16 * 1024);
    for (const [extra, shown] of [
      [{ priority: 1_000_000 }, { priority: 1_000_000, metadata: null }],
      [{ priority: -1_000_000 }, { priority: -1_000_000, metadata: null }],
      [
        { priority: null, metadata: null },
        { priority: 0, metadata: null },
      ],
      [{ metadata: {} }, { priority: 0, metadata: {} }],
      [{ metadata: exact }, { priority: 0, metadata: exact }],
    ] as const) {
      const { res, body } = await submit(h, { workflow: sumWorkflow('n'), ...extra });
      expect({ status: res.status, body }).toMatchObject({ status: 201, body: shown });
    }
  });

  it("priority orders the account's queue: higher first, FIFO within one; queue_position follows it", async () => {
    const started: string[] = [];
    await start({ engine: recordingEngine(started) });
    const blocker = await submitOk(h, waitWorkflow(1, 25, 400));
    await waitForJob(h, blocker.id, 'running');
    const submitted: Record<string, any> = {};
    for (const [name, priority] of [
      ['a', undefined],
      ['b', 0],
      ['c', 5],
      ['d', -1],
      ['e', 5],
    ] as const) {
      const { res, body } = await submit(h, { workflow: sumWorkflow(name), ...(priority === undefined ? {} : { priority }) });
      expect(res.status).toBe(201);
      submitted[name] = body;
    }
    // At submission: each one's place among the jobs queued then.
    expect(Object.values(submitted).map((j) => j.queue_position)).toEqual([0, 1, 0, 3, 1]);
    const order = ['c', 'e', 'a', 'b', 'd'];
    for (const [i, name] of order.entries()) expect((await jobNow(h, submitted[name].id)).queue_position).toBe(i);
    await cancelJob(h, blocker.id);
    for (const name of order) await waitForJob(h, submitted[name].id, 'succeeded');
    expect(started).toEqual([blocker.id, ...order.map((name) => submitted[name].id)]);
  });

  it("priority never lets one account jump another's turn", async () => {
    const started: string[] = [];
    const accounts = [
      { id: 'alice', tier: 'free', apiKeys: ['ka'] },
      { id: 'bob', tier: 'free', apiKeys: ['kb'] },
    ];
    await start({ accounts, engine: recordingEngine(started), maxConcurrentJobs: 1 });
    const alice = asKey(h, 'ka');
    const bob = asKey(h, 'kb');
    const blocker = await submitOk(alice, waitWorkflow(1, 25, 400));
    await waitForJob(alice, blocker.id, 'running');
    const b1 = (await submit(bob, { workflow: sumWorkflow('b'), priority: -100 })).body;
    const a1 = (await submit(alice, { workflow: sumWorkflow('a'), priority: 100 })).body;
    await cancelJob(alice, blocker.id);
    await waitForJob(alice, a1.id, 'succeeded');
    await waitForJob(bob, b1.id, 'succeeded');
    // Bob has not been served yet, Alice just was: Bob's turn, whatever the priorities.
    expect(started).toEqual([blocker.id, b1.id, a1.id]);
  });

  it('outputs_reused: false on a first run, true when the engine answers nodes from an earlier run of the account', async () => {
    const accounts = [
      { id: 'alice', tier: 'free', apiKeys: ['ka'] },
      { id: 'bob', tier: 'free', apiKeys: ['kb'] },
    ];
    await start({ accounts });
    const alice = asKey(h, 'ka');
    const bob = asKey(h, 'kb');
    const first = await runJob(alice, sumWorkflow('n', 11, 12));
    expect(first).toMatchObject({ status: 'succeeded', outputs_reused: false });
    const again = await runJob(alice, sumWorkflow('n', 11, 12));
    expect(again).toMatchObject({ status: 'succeeded', outputs_reused: true });
    expect(h.runs.Add).toBe(1); // computed once, answered from the cache the second time
    // Another account's results are never its cache.
    expect(await runJob(bob, sumWorkflow('n', 11, 12))).toMatchObject({ status: 'succeeded', outputs_reused: false });
    // The listing and the stream show the same.
    const listed = (await (await alice.fetch('/api/v2/jobs')).json()) as any;
    expect(listed.jobs.map((j: any) => [j.id, j.outputs_reused])).toEqual([
      [again.id, true],
      [first.id, false],
    ]);
    const { sse } = await openEvents(alice, again.id);
    const [status] = eventsOf(await sse!.readToEnd()).filter((e) => e.event === 'status');
    expect(status!.json).toMatchObject({ id: again.id, status: 'succeeded', outputs_reused: true });
  });

  it('outputs_reused stays false for a node served by its twin earlier in the same job: that result was computed by the job', async () => {
    await start();
    const twins = {
      a: { class_type: 'Number', inputs: { value: 41 } },
      b: { class_type: 'Number', inputs: { value: 41 } },
      sa: { class_type: 'Show', inputs: { value: ['a', 0] } },
      sb: { class_type: 'Show', inputs: { value: ['b', 0] } },
    };
    const done = await runJob(h, twins);
    expect(done).toMatchObject({ status: 'succeeded', outputs_reused: false });
    expect(h.runs.Number).toBe(1);
  });

  it('outputs_reused shows while the job still runs', async () => {
    await start();
    const wf = (ms: number) => ({
      ...sumWorkflow('n', 21, 22),
      w: { class_type: 'Wait', inputs: { value: ['n3', 0], ms, steps: 200 } },
      sw: { class_type: 'Show', inputs: { value: ['w', 0] } },
    });
    await runJob(h, sumWorkflow('n', 21, 22));
    const job = await submitOk(h, wf(20));
    await until(
      'the second job shows outputs_reused while running',
      async () => {
        const now = await jobNow(h, job.id);
        expect(['queued', 'running']).toContain(now.status);
        return now.status === 'running' && now.outputs_reused === true;
      },
      10_000,
    );
    await cancelJob(h, job.id);
    expect(await waitForJob(h, job.id, 'canceled')).toMatchObject({ outputs_reused: true });
  });
});

describe('outputs_reused is stored with the job', () => {
  it('survives a restart of the service over the same database', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'graphrun-reused-'));
    const open = async () => {
      const storage = await createSqliteStorage({ filename: join(dir, 'db.sqlite'), blobs: createMemoryBlobStore() });
      const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });
      return createService({ storage, engine, logger: silentLogger, sweepIntervalMs: 0 });
    };
    const get = async (service: Awaited<ReturnType<typeof open>>, id: string) =>
      (await (await service.fetch(new Request(`http://svc/api/v2/jobs/${id}`))).json()) as any;
    try {
      const service = await open();
      const post = async () => {
        const res = await service.fetch(
          new Request('http://svc/api/v2/jobs', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ workflow: sumWorkflow('n', 5, 6), priority: 3, metadata: { k: 'v' } }),
          }),
        );
        const { id } = (await res.json()) as { id: string };
        await until('the job ends', async () => (await get(service, id)).status === 'succeeded', 10_000);
        return id;
      };
      const first = await post();
      const second = await post();
      await service.close();
      const reopened = await open();
      try {
        expect(await get(reopened, first)).toMatchObject({ outputs_reused: false, priority: 3, metadata: { k: 'v' } });
        expect(await get(reopened, second)).toMatchObject({ outputs_reused: true, priority: 3, metadata: { k: 'v' } });
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
