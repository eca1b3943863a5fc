// One account's heavy job computes off the thread that serves requests: while
// it runs, another account's requests and the job's own status are answered,
// a cancel ends it before its remaining nodes run, and a shutdown does not
// wait for it. Before worker threads, every one of these waited for the
// whole computation.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createService, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { asKey, cancelJob, getJob, heavyWorkflow, submitOk, waitForJob } from './helpers/jobs.ts';
import { openEvents, type SseReader } from './helpers/sse-client.ts';

const accounts = [
  { id: 'alice', tier: 'free', apiKeys: ['key-alice'] },
  { id: 'bob', tier: 'free', apiKeys: ['key-bob'] },
];

/** Reads the job's stream until a progress snapshot shows a scaling node computing; returns that node. */
async function untilScaling(sse: SseReader): Promise<string> {
  for (;;) {
    const event = await sse.nextEvent(60_000);
    if (!event) throw new Error('the stream ended before a scaling node ran');
    const node = event.event === 'progress' ? event.json?.current_node : null;
    if (typeof node === 'string' && node.startsWith('s')) return node;
  }
}

describe('a job computing does not hold up the service', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("answers another account and the job's own status while a node computes, and a cancel ends the job before its remaining nodes", async () => {
    h = await startHarness('node-server', { accounts });
    const alice = asKey(h, 'key-alice');
    const job = await submitOk(alice, heavyWorkflow());
    const { sse } = await openEvents(alice, job.id);
    const computing = await untilScaling(sse!);

    const spec = await asKey(h, 'key-bob').fetch('/api/v2/openapi.json');
    expect(spec.status).toBe(200);
    const now = (await getJob(alice, job.id)).body;
    expect(now.status).toBe('running');
    expect(now.progress.current_node).toMatch(/^s\d$/);
    expect(Number(now.progress.current_node.slice(1))).toBeLessThan(9);

    expect((await cancelJob(alice, job.id)).res.status).toBeLessThan(300);
    const ended = await waitForJob(alice, job.id, ['canceled', 'succeeded', 'failed'], 60_000);
    expect(ended.status).toBe('canceled');
    expect(ended.outputs).toEqual([]);
    expect(computing).toMatch(/^s\d$/);
  });

  it("/api/interrupt stops the account's job inside a node, before its remaining nodes", async () => {
    h = await startHarness('node-server', { accounts });
    const alice = asKey(h, 'key-alice');
    const res = await alice.fetch('/api/prompt', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: heavyWorkflow() }),
    });
    const { prompt_id } = (await res.json()) as { prompt_id: string };
    expect(res.status).toBe(200);
    const { sse } = await openEvents(alice, prompt_id);
    await untilScaling(sse!);
    expect((await alice.fetch('/api/interrupt', { method: 'POST' })).status).toBe(200);
    const ended = await waitForJob(alice, prompt_id, ['canceled', 'succeeded', 'failed'], 60_000);
    expect(ended.status).toBe('canceled');
    expect(ended.outputs).toEqual([]);
  });

  it('a shutdown stops a computing job at once and queues it again, without waiting for its nodes', async () => {
    h = await startHarness('node-server', { accounts });
    const alice = asKey(h, 'key-alice');
    const job = await submitOk(alice, heavyWorkflow());
    const { sse } = await openEvents(alice, job.id);
    await untilScaling(sse!);
    await h.service.close();

    // The row as the next instance finds it (an API-only one, so nothing runs it again here).
    const blobs = await createFsBlobStore({ dir: join(h.dir, 'blobs') });
    const storage = await createSqliteStorage({ filename: join(h.dir, 'graphrun.db'), blobs });
    const next = await createService({ storage, logger: silentLogger, accounts, runJobs: false, sweepIntervalMs: 0 });
    try {
      const res = await next.fetch(new Request(`http://graphrun.test/api/v2/jobs/${job.id}`, { headers: { authorization: 'Bearer key-alice' } }));
      const row = (await res.json()) as { status: string; outputs: unknown[] };
      expect(row.status).toBe('queued');
      expect(row.outputs).toEqual([]);
    } finally {
      await next.close();
    }
  });
});
