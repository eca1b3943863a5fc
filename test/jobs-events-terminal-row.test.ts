// The terminal `status` of a job's event stream, on the instance that ran
// it, shows the row its end wrote (core/jobs/events.ts): the stream reads
// the job only to connect, and its last frame is the job as GET shows it.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import { createGates, holdNode } from './helpers/hold-node.ts';
import { cancelJob, expectJobShape, getJob, submitOk } from './helpers/jobs.ts';
import { createTestNodes } from './helpers/local-nodes.ts';
import { recordingDatabase } from './helpers/recording-sqlite.ts';
import { openEvents, type SseReader } from './helpers/sse-client.ts';

/** Waits at the gate `key`, then saves a 3x2 image (one output). */
const gatedImage = (key: string) => ({
  g: { class_type: 'Hold', inputs: { key, value: 3, steps: 0 } },
  e: { class_type: 'EmptyImage', inputs: { width: ['g', 0], height: 2, batch_size: 1, color: 0x336699 } },
  s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'row' } },
});

/** The stream's read of the job (the connect snapshot, a status event without the row). */
const JOB_READ = /^select "id", "account_id", "status", .* from "jobs" where "id" = \? and "account_id" = \?/;

const WAIT_MS = 20_000;

async function nextStatus(sse: SseReader): Promise<any> {
  for (;;) {
    const e = await sse.nextEvent(WAIT_MS);
    if (e === null) throw new Error('the stream ended before a status');
    if (e.event === 'status') return e.json;
  }
}

describe.each(MODES)("a job's terminal status on its stream (%s)", (mode) => {
  let h: Harness;
  let ran: string[];
  let gates = createGates();
  afterEach(async () => {
    gates.open('1');
    gates.open('2');
    await h?.close();
  });
  const start = async () => {
    gates = createGates();
    const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, holdNode(gates)] });
    h = await startHarness(mode, { engine }, (blobs, dir) => {
      const recording = recordingDatabase(join(dir, 'graphrun.db'));
      ran = recording.ran;
      return createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs, database: recording.db });
    });
  };

  it('is the row its end wrote, sent with no read of the job, and what GET shows', async () => {
    await start();
    const job = await submitOk(h, gatedImage('1'));
    await gates.reached('1');
    const { res, sse } = await openEvents(h, job.id);
    expect(res.status).toBe(200);
    expect((await nextStatus(sse!)).status).toBe('running');
    const from = ran.length;
    gates.open('1');
    const last = await nextStatus(sse!);
    const reads = ran.slice(from).filter((sql) => JOB_READ.test(sql));
    expect(await sse!.nextEvent(WAIT_MS)).toBeNull(); // the stream ends on it
    expect(reads).toEqual([]);
    expectJobShape(last);
    expect(last).toMatchObject({ id: job.id, status: 'succeeded', error: null });
    expect(last.completed_at).not.toBeNull();
    expect(last.outputs).toHaveLength(1);
    const shown = (await getJob(h, job.id)).body;
    // The same job, output and all; an output's signed link is made per answer.
    const plain = (v: any) => ({ ...v, outputs: v.outputs.map(({ url: _u, url_expires_at: _e, ...o }: any) => o) });
    expect(plain(last)).toEqual(plain(shown));
  });

  it('of a job canceled while it runs: its end is shown the same way', async () => {
    await start();
    const job = await submitOk(h, gatedImage('2'));
    await gates.reached('2');
    const { sse } = await openEvents(h, job.id);
    expect((await nextStatus(sse!)).status).toBe('running');
    expect((await cancelJob(h, job.id)).res.status).toBe(200);
    let last = await nextStatus(sse!);
    // `canceling` comes as a status of its own first (a read: it is not the job's last).
    if (last.status === 'canceling') last = await nextStatus(sse!);
    expect(last).toMatchObject({ id: job.id, status: 'canceled' });
    expect(await sse!.nextEvent(WAIT_MS)).toBeNull();
    const shown = (await getJob(h, job.id)).body;
    expect(last).toEqual(shown);
  });
});
