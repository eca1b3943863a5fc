// Many queued jobs of large workflows: GET /api/queue and /api/history answer
// every item in order with its workflow, reading the workflows a page at a
// time as the body goes out (never the whole queue before answering), and
// the reads that return no workflow (the job list, status, v2 GET, cancel,
// the sweep) parse none. Workflows are counted as JSON.parse calls on texts of
// their size: nothing else this large is parsed while a case measures.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ACCOUNTS, asCloud, type CloudJobsHarness, getJson, postJson, promptOk, startCloudJobs } from './helpers/cloud-jobs.ts';
import { MODES, type Mode } from './helpers/harness.ts';
import { asKey, jobNow, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';

const LONG = 60_000;
/** Pending jobs: ten pages of workflows. */
const COUNT = 40;
const SIZE = 256 * 1024;
/** No JSON text but a workflow (or a body carrying some) is this large here. */
const LARGE = 200 * 1024;
/** Workflows a streaming answer may have read ahead of its reader: two pages of a few. */
const AHEAD = 8;

/** Number -> Wait -> Show beside Text -> ShowAny, the text making the workflow SIZE bytes and naming it. */
const bigWorkflow = (n: number) => ({
  ...waitWorkflow(1, LONG),
  t1: { class_type: 'Text', inputs: { text: `job ${n} `.padEnd(SIZE, 'x'), flag: true, mode: 'fast' } },
  t2: { class_type: 'ShowAny', inputs: { value: ['t1', 0] } },
});

/** Counts JSON.parse calls on workflow-sized texts until restored. */
function countLargeParses() {
  const parse = JSON.parse;
  let n = 0;
  const spy = vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    if (typeof text === 'string' && text.length >= LARGE) n++;
    return parse(text, reviver);
  });
  return { count: () => n, restore: () => spy.mockRestore() };
}

/** Reads the body until `bytes` have come (or it ends), then the rest; returns the parse count at that point and the text. */
async function readInSteps(res: Response, bytes: number, count: () => number): Promise<{ early: number; text: string }> {
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let got = 0;
  let early = -1;
  for (;;) {
    if (early < 0 && got >= bytes) early = count();
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    got += value.length;
  }
  return { early, text: Buffer.concat(chunks).toString('utf8') };
}

function queueLarge(modes: Mode[], title: string, cases: (s: () => Setup) => void) {
  describe.each(modes)(`${title} (%s)`, (mode) => {
    let setup: Setup;
    beforeEach(async () => {
      const h = await startCloudJobs(mode, { accounts: ACCOUNTS, tierLimits: { free: 1 } });
      const alice = asCloud(h, 'key-alice');
      const running = await promptOk(alice, bigWorkflow(0));
      await waitForJob(asKey(h, 'key-alice'), running.prompt_id, 'running');
      const pending = [];
      for (let n = 1; n <= COUNT; n++) pending.push(await promptOk(alice, bigWorkflow(n)));
      setup = { h, alice, running, pending };
    }, 60_000);
    afterEach(async () => setup?.h.close());
    cases(() => setup);
  });
}

interface Setup {
  h: CloudJobsHarness;
  alice: CloudJobsHarness;
  running: { prompt_id: string; number: number };
  pending: Array<{ prompt_id: string; number: number }>;
}

queueLarge(MODES, 'a long queue of large workflows', (s) => {
  it('GET /api/queue: every item, running then pending, oldest first, each with its workflow', async () => {
    const { alice, running, pending } = s();
    const { res, body } = await getJson(alice, '/api/queue');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(body)).toEqual(['queue_running', 'queue_pending']);
    const item = (job: Setup['running'], n: number) => [job.number, job.prompt_id, bigWorkflow(n), ['w3', 't2'], { create_time: expect.any(Number) }];
    expect(body.queue_running).toEqual([item(running, 0)]);
    expect(body.queue_pending.map((i: unknown[]) => i[1])).toEqual(pending.map((p) => p.prompt_id));
    for (const [i, job] of pending.entries()) expect(body.queue_pending[i]).toEqual(item(job, i + 1));
  });

  it('the job list, status, v2 GET, prompt count, sweep and clear parse no workflow; history returns them, max_items and offset honoured', async () => {
    const { h, alice, running, pending } = s();
    const parses = countLargeParses();
    try {
      const list = await getJson(alice, '/api/jobs?limit=100');
      expect(list.body.jobs).toHaveLength(COUNT + 1);
      expect((await getJson(alice, `/api/job/${pending[0]!.prompt_id}/status`)).body.status).toBe('pending');
      expect((await jobNow(asKey(h, 'key-alice'), running.prompt_id)).status).toBe('running');
      expect((await getJson(alice, '/api/prompt')).body.exec_info.queue_remaining).toBe(COUNT + 1);
      await h.service.sweep();
      const cleared = await postJson(alice, '/api/queue', { clear: true });
      expect(cleared.body.deleted).toHaveLength(COUNT);
      expect(parses.count()).toBe(0);
    } finally {
      parses.restore();
    }
    // Canceled before they ran: history, newest first, each with its workflow.
    const newest = await getJson(alice, '/api/history?max_items=10');
    expect(newest.res.status).toBe(200);
    const ids = [...pending].reverse().map((p) => p.prompt_id);
    expect(Object.keys(newest.body)).toEqual(ids.slice(0, 10));
    const last = pending[COUNT - 1]!;
    expect(newest.body[last.prompt_id].prompt).toEqual([last.number, last.prompt_id, bigWorkflow(COUNT), {}, ['w3', 't2']]);
    expect(Object.keys((await getJson(alice, '/api/history?max_items=10&offset=35')).body)).toEqual(ids.slice(35));
  });
});

// In process only: through a socket, the server may write ahead into the connection's buffers.
queueLarge(['in-process'], 'answers that carry workflows read them as the body goes out', (s) => {
  it('GET /api/queue reads a page of workflows at a time, each once', async () => {
    const parses = countLargeParses();
    try {
      const res = await s().alice.fetch('/api/queue');
      expect(res.status).toBe(200);
      expect(parses.count()).toBeLessThanOrEqual(AHEAD);
      const { early, text } = await readInSteps(res, 3 * SIZE, parses.count);
      expect(early).toBeLessThanOrEqual(AHEAD);
      expect(parses.count()).toBe(COUNT + 1);
      expect(JSON.parse(text).queue_pending).toHaveLength(COUNT);
    } finally {
      parses.restore();
    }
  });

  it('GET /api/history reads a page of workflows at a time, each once', async () => {
    const { alice } = s();
    await postJson(alice, '/api/queue', { clear: true });
    const parses = countLargeParses();
    try {
      const res = await alice.fetch(`/api/history?max_items=${COUNT}`);
      expect(res.status).toBe(200);
      expect(parses.count()).toBeLessThanOrEqual(AHEAD);
      const { early, text } = await readInSteps(res, 3 * SIZE, parses.count);
      expect(early).toBeLessThanOrEqual(AHEAD);
      expect(parses.count()).toBe(COUNT);
      expect(Object.keys(JSON.parse(text))).toHaveLength(COUNT);
    } finally {
      parses.restore();
    }
  });
});
