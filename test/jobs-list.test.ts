// GET /api/v2/jobs, an addition to the contract: the caller's jobs newest
// first, each the Job GET /api/v2/jobs/{id} answers, filtered by status,
// paged by an opaque cursor ({jobs, next_cursor}), other accounts' and
// retired jobs left out, bad parameters 422 invalid_request, and no
// workflow read to answer it. Jobs stay queued (runJobs: false) unless a
// test needs them finished, so every page is deterministic.
import { afterEach, describe, expect, it } from 'vitest';
import { createService, type ServiceOptions, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { expectEnvelope, testClock } from './helpers/assets.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, cancelJob, expectJobShape, type JobsHarness, jobNow, runJob, saveImageWorkflow, startJobs, submitOk } from './helpers/jobs.ts';
import { sumWorkflow } from './helpers/local-nodes.ts';

const ACCOUNTS = [
  { id: 'alice', tier: 'free', apiKeys: ['ka'] },
  { id: 'bob', tier: 'free', apiKeys: ['kb'] },
];

/** GET /api/v2/jobs with this query; expects 200 and the page's shape. */
async function list(h: JobsHarness, query = ''): Promise<{ jobs: any[]; next_cursor: string | null }> {
  const res = await h.fetch(`/api/v2/jobs${query}`);
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status: 200 });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const body = JSON.parse(text);
  expect(Object.keys(body).sort()).toEqual(['jobs', 'next_cursor']);
  expect(body.next_cursor === null || typeof body.next_cursor === 'string').toBe(true);
  for (const job of body.jobs) expectJobShape(job);
  return body;
}

const ids = (jobs: Array<{ id: string }>) => jobs.map((j) => j.id);

/** Every page from the first, following next_cursor; the ids in order. */
async function walk(h: JobsHarness, query: string): Promise<{ ids: string[]; pages: number }> {
  const out: string[] = [];
  let pages = 0;
  let cursor: string | null = null;
  do {
    const sep = query === '' ? '?' : '&';
    const page = await list(h, cursor === null ? query : `${query}${sep}cursor=${encodeURIComponent(cursor)}`);
    out.push(...ids(page.jobs));
    cursor = page.next_cursor;
    pages++;
  } while (cursor !== null && pages < 100);
  return { ids: out, pages };
}

describe.each(MODES)('GET /api/v2/jobs (%s)', (mode) => {
  let h: JobsHarness;
  const start = (options: Partial<ServiceOptions> = {}) => startJobs(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  /** Submits `n` queued jobs (runJobs is off) in order; their ids, oldest first. */
  async function submitMany(as: JobsHarness, n: number): Promise<string[]> {
    const out = [];
    for (let i = 0; i < n; i++) out.push((await submitOk(as, sumWorkflow('n', i % 100, 1))).id);
    return out;
  }

  it("lists the caller's jobs newest first, each exactly as GET /api/v2/jobs/{id} shows it, and no other account's", async () => {
    await start({ accounts: ACCOUNTS, runJobs: false });
    const alice = asKey(h, 'ka');
    const bob = asKey(h, 'kb');
    const [a1, a2] = await submitMany(alice, 2);
    const [b1] = await submitMany(bob, 1);
    const [a3] = await submitMany(alice, 1);
    await cancelJob(alice, a2);

    const page = await list(alice);
    expect(ids(page.jobs)).toEqual([a3, a2, a1]);
    expect(page.next_cursor).toBeNull();
    for (const job of page.jobs) expect(job).toEqual(await jobNow(alice, job.id));
    expect(page.jobs.map((j) => [j.status, j.queue_position])).toEqual([
      ['queued', 2],
      ['canceled', null],
      ['queued', 0],
    ]);
    expect(ids((await list(bob)).jobs)).toEqual([b1]);
    expect(await list(asKey(h, 'kb'), '?status=canceled')).toEqual({ jobs: [], next_cursor: null });
  });

  it('a finished job is listed with its outputs, as GET shows it', async () => {
    await start();
    const done = await runJob(h, saveImageWorkflow());
    expect(done.status).toBe('succeeded');
    const [listed] = (await list(h)).jobs;
    const now = await jobNow(h, done.id);
    // Signed output URLs are minted per answer: compare the rest.
    const unsigned = (job: any) => ({ ...job, outputs: job.outputs.map(({ url, url_expires_at, ...o }: any) => o) });
    expect(unsigned(listed)).toEqual(unsigned(now));
    expect(listed.outputs).toHaveLength(1);
  });

  it('pages of 20 by default, up to 100 with limit, following next_cursor to the last page (next_cursor null)', async () => {
    await start({ runJobs: false });
    const made = (await submitMany(h, 25)).reverse();
    const first = await list(h);
    expect(ids(first.jobs)).toEqual(made.slice(0, 20));
    expect(typeof first.next_cursor).toBe('string');
    const second = await list(h, `?cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect(ids(second.jobs)).toEqual(made.slice(20));
    expect(second.next_cursor).toBeNull();
    expect(await walk(h, '?limit=7')).toEqual({ ids: made, pages: 4 });
    expect(await walk(h, '?limit=100')).toEqual({ ids: made, pages: 1 });
    // Exactly a page's worth: the last page says so without an empty one after it.
    expect(await walk(h, '?limit=5')).toEqual({ ids: made, pages: 5 });
  });

  it('a job submitted between two pages is on neither of the later ones, and nothing is skipped or repeated', async () => {
    await start({ runJobs: false });
    const made = (await submitMany(h, 5)).reverse();
    const first = await list(h, '?limit=2');
    expect(ids(first.jobs)).toEqual(made.slice(0, 2));
    const late = (await submitOk(h, sumWorkflow('late'))).id;
    const second = await list(h, `?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
    const third = await list(h, `?limit=2&cursor=${encodeURIComponent(second.next_cursor!)}`);
    expect([...ids(second.jobs), ...ids(third.jobs)]).toEqual(made.slice(2));
    expect(third.next_cursor).toBeNull();
    expect(ids((await list(h, '?limit=1')).jobs)).toEqual([late]);
  });

  it('status filters: one, several comma-separated or repeated, with paging inside the filter', async () => {
    await start({ runJobs: false });
    const [q1, c1, q2, c2, q3] = await submitMany(h, 5);
    await cancelJob(h, c1);
    await cancelJob(h, c2);
    expect(ids((await list(h, '?status=queued')).jobs)).toEqual([q3, q2, q1]);
    expect(ids((await list(h, '?status=canceled')).jobs)).toEqual([c2, c1]);
    expect(ids((await list(h, '?status=queued,canceled')).jobs)).toEqual([q3, c2, q2, c1, q1]);
    expect(ids((await list(h, '?status=queued&status=canceled')).jobs)).toEqual([q3, c2, q2, c1, q1]);
    expect(ids((await list(h, '?status=%20canceled%20,,queued')).jobs)).toEqual([q3, c2, q2, c1, q1]);
    expect((await list(h, '?status=succeeded,failed,running')).jobs).toEqual([]);
    // Expired jobs answer 404 everywhere: asking for them lists none.
    expect((await list(h, '?status=expired')).jobs).toEqual([]);
    expect(await walk(h, '?status=queued&limit=2')).toEqual({ ids: [q3, q2, q1], pages: 2 });
  });

  it('jobs past their retention are left out before the sweep marks them; the cursor still reaches older ones', async () => {
    const clock = testClock();
    await start({ runJobs: false, now: clock.now, jobRetentionSeconds: 60 });
    const [old, gone1, gone2] = await submitMany(h, 3);
    await cancelJob(h, gone1);
    await cancelJob(h, gone2);
    clock.advance(61_000);
    // A queued job stays visible until it ends; the finished ones are retired.
    expect((await h.fetch(`/api/v2/jobs/${gone2}`)).status).toBe(404);
    const first = await list(h, '?limit=2');
    expect(first.jobs).toEqual([]);
    expect(typeof first.next_cursor).toBe('string');
    const second = await list(h, `?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect(ids(second.jobs)).toEqual([old]);
    expect(second.next_cursor).toBeNull();
  });

  it.each([
    ['status=bogus', 'status'],
    ['status=queued,nope', 'status'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=2.5', 'limit'],
    ['cursor=garbage!', 'cursor'],
    ['cursor=bm9wZQ', 'cursor'], // base64 of "nope"
    [`cursor=${'A'.repeat(200)}`, 'cursor'],
  ])('?%s is 422 invalid_request naming the parameter', async (query, field) => {
    await start({ runJobs: false });
    const err = await expectEnvelope(await h.fetch(`/api/v2/jobs?${query}`), 422, 'invalid_request');
    expect(err.error.details?.field).toBe(field);
  });

  it('needs the same credentials as every v2 route', async () => {
    await start({ accounts: ACCOUNTS, runJobs: false });
    await expectEnvelope(await h.fetch('/api/v2/jobs'), 401, 'unauthorized');
    await expectEnvelope(await asKey(h, 'wrong').fetch('/api/v2/jobs'), 401, 'unauthorized');
  });
});

describe('GET /api/v2/jobs reads no workflow', () => {
  it('answers a page of jobs without asking the store for a single workflow', async () => {
    const storage = createMemoryStorage();
    let workflowReads = 0;
    const listJobWorkflows = storage.metadata.listJobWorkflows.bind(storage.metadata);
    storage.metadata.listJobWorkflows = (accountId, jobIds) => {
      workflowReads++;
      return listJobWorkflows(accountId, jobIds);
    };
    const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, runJobs: false });
    try {
      const post = (workflow: unknown) =>
        service.fetch(
          new Request('http://svc/api/v2/jobs', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ workflow }),
          }),
        );
      for (let i = 0; i < 3; i++) expect((await post(saveImageWorkflow(i))).status).toBe(201);
      const before = workflowReads;
      const res = await service.fetch(new Request('http://svc/api/v2/jobs?limit=2'));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { jobs: unknown[] }).jobs).toHaveLength(2);
      expect(workflowReads).toBe(before);
    } finally {
      await service.close();
    }
  });
});
