// Bounds one account cannot push past at the others' expense: its own share
// of the queue (maxQueuedPerAccount, 429 queue_full with Retry-After), and
// the size of one workflow in nodes (maxWorkflowNodes, refused with the
// surface's error), while a long chain within the bound runs: graphs are
// walked without recursion, so depth is no limit of its own.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { expectEnvelope } from './helpers/assets.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, cancelJob, type JobsHarness, startJobs, submit, submitOk, waitForJob } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';

const accounts = [
  { id: 'alice', tier: 'free', apiKeys: ['key-alice'] },
  { id: 'bob', tier: 'free', apiKeys: ['key-bob'] },
];

/** n nodes: a string passed down a chain of concatenations, shown at the end. */
function chain(n: number): Record<string, unknown> {
  const w: Record<string, unknown> = { s0: { class_type: 'PrimitiveString', inputs: { value: 'chain' } } };
  for (let i = 1; i < n - 1; i++) {
    w[`s${i}`] = { class_type: 'StringConcatenate', inputs: { string_a: [`s${i - 1}`, 0], string_b: '', delimiter: '' } };
  }
  w.show = { class_type: 'PreviewAny', inputs: { source: [`s${n - 2}`, 0] } };
  return w;
}

describe.each(MODES)('limits (%s)', (mode) => {
  let h: JobsHarness;
  const start = async (options: Partial<ServiceOptions> = {}) => {
    h = await startJobs(mode, options);
  };
  afterEach(() => h?.close());

  it('an account past maxQueuedPerAccount gets 429 queue_full with Retry-After on both surfaces; another account does not', async () => {
    await start({ accounts, maxQueuedPerAccount: 2 });
    const alice = asKey(h, 'key-alice');
    // Tier free: one runs, the next two wait, which is all alice may have queued.
    const running = await submitOk(alice, waitWorkflow(1, 600_000));
    await waitForJob(alice, running.id, 'running');
    const queued = [await submitOk(alice, waitWorkflow(2, 1)), await submitOk(alice, waitWorkflow(3, 1))];

    const refused = await alice.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: waitWorkflow(4, 1) }),
    });
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const body = await expectEnvelope(refused, 429, 'queue_full');
    expect(body.error.details).toEqual({ queued: 2, limit: 2 });
    expect(body.error.message).toMatch(/already has 2 queued jobs/);

    const cloud = await alice.fetch('/api/prompt', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'key-alice' },
      body: JSON.stringify({ prompt: waitWorkflow(5, 1) }),
    });
    expect(cloud.status).toBe(429);
    expect(((await cloud.json()) as any).code).toBe('queue_full');

    // Bob's share is his own.
    const bob = await submit(asKey(h, 'key-bob'), { workflow: waitWorkflow(6, 1) });
    expect(bob.res.status).toBe(201);

    // Once one of alice's starts, she may queue again.
    await cancelJob(alice, running.id);
    await waitForJob(alice, queued[0].id, ['running', 'succeeded']);
    expect((await submit(alice, { workflow: waitWorkflow(7, 1) })).res.status).toBe(201);
  });

  it('a workflow of more than maxWorkflowNodes nodes is refused on both surfaces, naming the bound', async () => {
    await start({ maxWorkflowNodes: 50 });
    const v2 = await submit(h, { workflow: chain(51) });
    expect(v2.res.status).toBe(422);
    expect(v2.body.error).toMatchObject({ code: 'invalid_workflow', details: { reason: 'too_many_nodes' } });
    expect(v2.body.error.message).toBe('The workflow has 51 nodes; this service takes at most 50 per workflow.');
    const cloud = await h.fetch('/api/prompt', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: chain(51) }),
    });
    expect(cloud.status).toBe(400);
    expect(((await cloud.json()) as any).error.type).toBe('too_many_nodes');
    expect((await submit(h, { workflow: chain(50) })).res.status).toBe(201);
  });

  it('the default bound refuses 12,000 nodes with a 422, not a 500', async () => {
    await start();
    const res = await submit(h, { workflow: chain(12_000) });
    expect(res.res.status).toBe(422);
    expect(res.body.error.details.reason).toBe('too_many_nodes');
  });

  it('a 15,000-node chain within a raised bound validates, plans and runs (no recursion to overflow)', async () => {
    await start({ maxWorkflowNodes: 15_000 });
    const job = await submitOk(h, chain(15_000));
    const done = await waitForJob(h, job.id, ['succeeded', 'failed'], 60_000);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
  }, 90_000);
});
