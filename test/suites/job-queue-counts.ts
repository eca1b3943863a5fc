// JobStore conformance, queue counts: the queue's size per account and in
// all, and the accounts with queued jobs, stay exact through every move into
// and out of `queued` (an insert, a claim, a cancel, a requeue, a refused
// move). The SQL store keeps them as counts changed in each move's
// transaction (storage/sql/queue-counts.ts); a path that forgot one would
// drift here.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobClaim, JobStore } from '../../storage/types.ts';
import { type MakeStore, newJob, T0 } from './store-fixtures.ts';

const claim = (account_id: string): JobClaim => ({ account_id, limit: 5, owner: 'r', now: T0, lease_ms: 30_000 });

export function jobQueueCountSuite(make: MakeStore<JobStore>): void {
  describe('JobStore queue counts', () => {
    let store: JobStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    const counts = async () => ({
      all: await store.countJobs(['queued']),
      a: await store.countJobs(['queued'], 'acc1'),
      b: await store.countJobs(['queued'], 'acc2'),
      accounts: (await store.listAccountsWithQueuedJobs(10)).map((x) => [x.account_id, x.oldest_seq]),
    });

    it('follow inserts, claims, cancels, requeues and refused moves', async () => {
      const [a1, a2] = [await store.createJob(newJob('a1')), await store.createJob(newJob('a2'))];
      await store.createJob(newJob('a3'));
      const [b1, b2] = [await store.createJob(newJob('b1', { account_id: 'acc2' })), await store.createJob(newJob('b2', { account_id: 'acc2' }))];
      expect(await counts()).toEqual({
        all: 5,
        a: 3,
        b: 2,
        accounts: [
          ['acc1', a1.seq],
          ['acc2', b1.seq],
        ],
      });

      const running = await store.claimJob(claim('acc1'));
      expect(running?.id).toBe('a1');
      expect(await counts()).toEqual({
        all: 4,
        a: 2,
        b: 2,
        accounts: [
          ['acc1', a2.seq],
          ['acc2', b1.seq],
        ],
      });

      // Canceled while queued; a move from a status the job is not in changes nothing.
      expect(await store.transitionJob('b1', 'queued', 'canceled', { completed_at: T0 })).toMatchObject({ id: 'b1', status: 'canceled' });
      expect(await store.transitionJob('b1', 'queued', 'canceled', { completed_at: T0 })).toBeNull();
      expect(await store.transitionJob('a2', 'running', 'queued')).toBeNull();
      expect(await counts()).toEqual({
        all: 3,
        a: 2,
        b: 1,
        accounts: [
          ['acc1', a2.seq],
          ['acc2', b2.seq],
        ],
      });

      // Taken back from its runner: queued again, the oldest of its account once more.
      expect(await store.transitionJob('a1', 'running', 'queued', { lease: null })).toMatchObject({ id: 'a1', status: 'queued' });
      expect(await counts()).toEqual({
        all: 4,
        a: 3,
        b: 1,
        accounts: [
          ['acc1', a1.seq],
          ['acc2', b2.seq],
        ],
      });

      // An account whose queue empties leaves the list.
      expect(await store.transitionJob('b2', 'queued', 'failed', { completed_at: T0 })).toMatchObject({ id: 'b2', status: 'failed' });
      expect((await store.claimJob(claim('acc1')))?.id).toBe('a1');
      expect(await store.transitionJob('a3', 'queued', 'canceled', { completed_at: T0 })).toMatchObject({ id: 'a3', status: 'canceled' });
      expect(await counts()).toEqual({ all: 1, a: 1, b: 0, accounts: [['acc1', a2.seq]] });
    });

    it('bound inserts by the counts: refused past the bound, admitted again once a job leaves the queue', async () => {
      for (const id of ['x1', 'x2']) await store.createJob(newJob(id), { maxQueuedPerAccount: 2 });
      expect(await store.createJob(newJob('x3'), { maxQueuedPerAccount: 2 })).toEqual({ refused: 'account', queued: 2, limit: 2 });
      expect(await store.createJob(newJob('y1', { account_id: 'acc2' }), { maxQueued: 2 })).toEqual({ refused: 'queue', queued: 2, limit: 2 });
      await store.claimJob(claim('acc1'));
      expect(await store.createJob(newJob('x3'), { maxQueuedPerAccount: 2, maxQueued: 2 })).toMatchObject({ id: 'x3', status: 'queued' });
      expect(await counts()).toMatchObject({ all: 2, a: 2, b: 0 });
    });
  });
}
