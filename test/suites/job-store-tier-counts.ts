// JobStore conformance, the counts by status and account tier
// (countJobsByTier): what /metrics and /ops/status read of the queue. Needs
// the account store it shares a database with, whose tiers it groups by.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore, JobStore, JobTierCount } from '../../storage/types.ts';
import { type MakeStore, newJob, T0 } from './store-fixtures.ts';

export type JobStoreWithAccounts = JobStore & Pick<AccountStore, 'upsertAccount'>;

/** Rows in one order, whatever order the store gives them in. */
const sorted = (rows: JobTierCount[]) => [...rows].sort((a, b) => a.tier.localeCompare(b.tier) || a.status.localeCompare(b.status));

export function jobTierCountSuite(make: MakeStore<JobStoreWithAccounts>): void {
  describe('JobStore counts by tier', () => {
    let store: JobStoreWithAccounts;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it('counts jobs by status and account tier, with the oldest created_at of each group', async () => {
      await store.upsertAccount({ id: 'free1', tier: 'free' });
      await store.upsertAccount({ id: 'free2', tier: 'free' });
      await store.upsertAccount({ id: 'pro1', tier: 'pro' });
      await store.upsertAccount({ id: 'plain' }); // the stores' default tier
      const jobs = [
        newJob('f1', { account_id: 'free1', created_at: T0 + 30 }),
        newJob('f2', { account_id: 'free2', created_at: T0 + 10 }),
        newJob('f3', { account_id: 'free1', created_at: T0 + 20 }),
        newJob('p1', { account_id: 'pro1', created_at: T0 + 5 }),
        newJob('p2', { account_id: 'pro1', created_at: T0 + 6 }),
        newJob('p3', { account_id: 'pro1', created_at: T0 + 7 }),
        newJob('d1', { account_id: 'plain', created_at: T0 + 40 }),
        // No account row: counted as the default tier, as upsertAccount would make it.
        newJob('n1', { account_id: 'nobody', created_at: T0 + 1 }),
      ];
      for (const j of jobs) await store.createJob(j);
      await store.transitionJob('f3', 'queued', 'running', { started_at: T0 + 50 });
      await store.transitionJob('p1', 'queued', 'running', { started_at: T0 + 50 });
      await store.transitionJob('p1', 'running', 'succeeded', { completed_at: T0 + 60 });
      await store.transitionJob('p2', 'queued', 'running', { started_at: T0 + 50 });
      await store.transitionJob('p2', 'running', 'failed', { completed_at: T0 + 60 });
      await store.transitionJob('p3', 'queued', 'canceled', { completed_at: T0 + 60 });
      await store.transitionJob('p3', 'canceled', 'expired');

      const all = ['queued', 'running', 'succeeded', 'failed', 'canceling', 'canceled'];
      expect(sorted(await store.countJobsByTier(all))).toEqual([
        { tier: 'default', status: 'queued', count: 2, oldest_created_at: T0 + 1 },
        { tier: 'free', status: 'queued', count: 2, oldest_created_at: T0 + 10 },
        { tier: 'free', status: 'running', count: 1, oldest_created_at: T0 + 20 },
        { tier: 'pro', status: 'failed', count: 1, oldest_created_at: T0 + 6 },
        { tier: 'pro', status: 'succeeded', count: 1, oldest_created_at: T0 + 5 },
      ]);
      // Only the statuses asked for; the expired job is counted when asked for.
      expect(sorted(await store.countJobsByTier(['queued']))).toEqual([
        { tier: 'default', status: 'queued', count: 2, oldest_created_at: T0 + 1 },
        { tier: 'free', status: 'queued', count: 2, oldest_created_at: T0 + 10 },
      ]);
      expect(await store.countJobsByTier(['expired'])).toEqual([{ tier: 'pro', status: 'expired', count: 1, oldest_created_at: T0 + 7 }]);
      expect(await store.countJobsByTier([])).toEqual([]);
    });

    it('follows a tier change of the account and its jobs moving on', async () => {
      await store.upsertAccount({ id: 'a', tier: 'free' });
      await store.createJob(newJob('j1', { account_id: 'a' }));
      await store.createJob(newJob('j2', { account_id: 'a', created_at: T0 + 1 }));
      expect(await store.countJobsByTier(['queued'])).toEqual([{ tier: 'free', status: 'queued', count: 2, oldest_created_at: T0 }]);
      await store.upsertAccount({ id: 'a', tier: 'creator' });
      await store.transitionJob('j1', 'queued', 'running', { started_at: T0 + 2 });
      expect(sorted(await store.countJobsByTier(['queued', 'running']))).toEqual([
        { tier: 'creator', status: 'queued', count: 1, oldest_created_at: T0 + 1 },
        { tier: 'creator', status: 'running', count: 1, oldest_created_at: T0 },
      ]);
    });
  });
}
