// A job submitted while nothing else waits starts with its submission
// (core/jobs/scheduler.ts, "Starting at submission"): on SQLite its insert
// and its claim share one commit, and it is running once the 201 is read,
// with no pass of the scheduler between. A job of another account already
// waiting keeps its turn.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { createGates, holdNode } from './helpers/hold-node.ts';
import { ALICE_AND_BOB, asKey, cancelJob, jobNow, submitOk, waitForJob } from './helpers/jobs.ts';
import { createTestNodes } from './helpers/local-nodes.ts';
import { recordingDatabase } from './helpers/recording-sqlite.ts';

/** A job that runs until the test opens its gate (`Hold`, keyed by the value). */
const gated = (value: number) => ({
  g: { class_type: 'Hold', inputs: { key: String(value), value, steps: 0 } },
  s: { class_type: 'Show', inputs: { value: ['g', 0] } },
});

const INSERT = /^insert into "jobs"/;
const CLAIM = /^update "jobs" set "status" = \?, "started_at" = \?/;
const COMMIT = /^commit$/i;

describe.each(MODES)('a job starts with its submission (%s)', (mode) => {
  let h: Harness;
  let ran: string[];
  let gates = createGates();
  const start = async (options: Record<string, unknown> = {}) => {
    gates = createGates();
    const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, holdNode(gates)] });
    h = await startHarness(mode, { engine, ...options }, (blobs, dir) => {
      const recording = recordingDatabase(join(dir, 'graphrun.db'));
      ran = recording.ran;
      return createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs, database: recording.db });
    });
  };
  afterEach(async () => {
    for (const key of ['1', '2', '3']) gates.open(key);
    await h?.close();
  });

  it('on an idle service: its insert and its claim share one commit, and it runs once the 201 is read', async () => {
    await start();
    const from = ran.length;
    const job = await submitOk(h, gated(1));
    expect(job.status).toBe('queued');
    // In process, no turn of the event loop has passed since the insert: nothing but the submission has claimed it.
    if (mode === 'in-process') expect((await jobNow(h, job.id)).status).toBe('running');
    await waitForJob(h, job.id, 'running');
    const mine = ran.slice(from);
    const insert = mine.findIndex((sql) => INSERT.test(sql));
    const claim = mine.findIndex((sql) => CLAIM.test(sql));
    expect(insert).toBeGreaterThanOrEqual(0);
    expect(claim).toBeGreaterThan(insert);
    expect(mine.slice(insert, claim).some((sql) => COMMIT.test(sql))).toBe(false);
    gates.open('1');
    await waitForJob(h, job.id, 'succeeded');
  });

  it("behind another account's queued job it only queues, and starts in its turn", async () => {
    // One job at a time for the whole service: bob's job waits behind alice's running one.
    await start({ accounts: ALICE_AND_BOB, maxConcurrentJobs: 1 });
    const alice = asKey(h, 'ka');
    const bob = asKey(h, 'kb');
    const first = await submitOk(alice, gated(1));
    await waitForJob(alice, first.id, 'running');
    const waiting = await submitOk(bob, gated(2));
    // The engine is full: bob's job queues, and alice's next one may not pass it.
    const second = await submitOk(alice, gated(3));
    expect((await jobNow(bob, waiting.id)).status).toBe('queued');
    expect((await jobNow(alice, second.id)).status).toBe('queued');
    await cancelJob(alice, first.id);
    await waitForJob(bob, waiting.id, 'running');
    expect((await jobNow(alice, second.id)).status).toBe('queued');
    gates.open('2');
    gates.open('3');
    await waitForJob(alice, second.id, 'succeeded');
  });
});
