// JobStore conformance, queue bounds: createJob given bounds counts the
// queued jobs as one step with its insert, so a refused job leaves nothing
// behind and racing inserts never overshoot. Run from job-store.ts.
import { expect, it } from 'vitest';
import type { BoundedJob, JobStore, JobSummary, QueueRefusal } from '../../storage/types.ts';
import { newJob, T0 } from './store-fixtures.ts';

const job = newJob;
const isRefusal = (r: JobSummary | QueueRefusal): r is QueueRefusal => 'refused' in r;
/** The row of an insert that was to fit. */
const inserted = (r: BoundedJob | QueueRefusal): BoundedJob => {
  if (isRefusal(r)) throw new Error(`refused: ${JSON.stringify(r)}`);
  return r;
};

export function jobBoundCases(getStore: () => JobStore): void {
  it('createJob with bounds inserts below them; at a bound it answers the refusal and stores nothing', async () => {
    const store = getStore();
    const first = inserted(await store.createJob(job('a1'), { maxQueued: 3, maxQueuedPerAccount: 2 }));
    expect(first).toMatchObject({ id: 'a1', status: 'queued' });
    await store.createJob(job('a2'), { maxQueued: 3, maxQueuedPerAccount: 2 });
    // The account's own bound, with room left in the queue.
    expect(await store.createJob(job('a3'), { maxQueued: 3, maxQueuedPerAccount: 2 })).toEqual({ refused: 'account', queued: 2, limit: 2 });
    expect(await store.getJobById('a3')).toBeNull();
    // Another account still fits, until the whole queue is full; the queue-wide bound is checked first.
    expect(await store.createJob(job('b1', { account_id: 'acc2' }), { maxQueued: 3, maxQueuedPerAccount: 2 })).toMatchObject({ id: 'b1' });
    expect(await store.createJob(job('b2', { account_id: 'acc2' }), { maxQueued: 3, maxQueuedPerAccount: 1 })).toEqual({
      refused: 'queue',
      queued: 3,
      limit: 3,
    });
    expect(await store.countJobs(['queued'])).toBe(3);
    // Inserts after a refusal go on in submission order.
    const next = inserted(await store.createJob(job('c1', { account_id: 'acc3' }), { maxQueued: 4 }));
    expect(next.seq).toBeGreaterThan(first.seq);
  });

  it('an insert that fails (its id taken) stores and counts nothing: the bounds and the order go on from the first', async () => {
    const store = getStore();
    const first = inserted(await store.createJob(job('a1'), { maxQueued: 2, maxQueuedPerAccount: 2 }));
    await expect(store.createJob(job('a1', { created_at: T0 + 1 }), { maxQueued: 2, maxQueuedPerAccount: 2 })).rejects.toThrow();
    expect(await store.getJobById('a1')).toMatchObject({ created_at: first.created_at });
    expect(await store.countJobs(['queued'])).toBe(1);
    const second = inserted(await store.createJob(job('a2'), { maxQueued: 2, maxQueuedPerAccount: 2 }));
    expect(second.queued_before).toBe(1);
    // The failed insert's turn on the order was taken back with it.
    expect(second.seq).toBe(first.seq + 1);
    expect(await store.createJob(job('a3'), { maxQueued: 3, maxQueuedPerAccount: 2 })).toEqual({ refused: 'account', queued: 2, limit: 2 });
  });

  it('a job inserted under maxQueued says how many were queued before it, as that check counted them', async () => {
    const store = getStore();
    expect(inserted(await store.createJob(job('a1'), { maxQueued: 10 })).queued_before).toBe(0);
    expect(inserted(await store.createJob(job('b1', { account_id: 'acc2' }), { maxQueued: 10, maxQueuedPerAccount: 5 })).queued_before).toBe(1);
    await store.transitionJob('a1', 'queued', 'running');
    expect(inserted(await store.createJob(job('a2'), { maxQueued: 10 })).queued_before).toBe(1);
    // Without that bound nothing is counted for it, nor said.
    expect(inserted(await store.createJob(job('a3'), { maxQueuedPerAccount: 5 }))).not.toHaveProperty('queued_before');
    const concurrent = await Promise.all(Array.from({ length: 6 }, (_, i) => store.createJob(job(`c${i}`), { maxQueued: 100 })));
    // Each counted the queue in its insert's own step: one each of 3..8.
    expect(concurrent.map((r) => inserted(r).queued_before).sort((x, y) => x! - y!)).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it('only queued jobs count; an absent bound is no bound', async () => {
    const store = getStore();
    await store.createJob(job('r'));
    await store.transitionJob('r', 'queued', 'running');
    await store.createJob(job('done', { status: 'succeeded' }));
    expect(await store.createJob(job('q1'), { maxQueued: 1 })).toMatchObject({ id: 'q1' });
    expect(await store.createJob(job('q2'), { maxQueuedPerAccount: 5 })).toMatchObject({ id: 'q2' });
    expect(await store.createJob(job('q3'), {})).toMatchObject({ id: 'q3' });
    expect(await store.createJob(job('q4'), { maxQueuedPerAccount: 3 })).toEqual({ refused: 'account', queued: 3, limit: 3 });
  });

  it('concurrent creates never exceed the bounds: exactly as many as fit are inserted', async () => {
    const store = getStore();
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => store.createJob(job(`c${i}`), { maxQueued: 100, maxQueuedPerAccount: 5 })));
    expect(made.filter((r) => !isRefusal(r))).toHaveLength(5);
    expect(made.filter(isRefusal).every((r) => r.refused === 'account' && r.queued === 5)).toBe(true);
    const more = await Promise.all(
      Array.from({ length: 12 }, (_, i) => store.createJob(job(`d${i}`, { account_id: `acc-${i % 3}` }), { maxQueued: 9 })),
    );
    expect(more.filter((r) => !isRefusal(r))).toHaveLength(4);
    expect(await store.countJobs(['queued'])).toBe(9);
  });
}
