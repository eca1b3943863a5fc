// The memory JobStore's counts by status and account tier (countJobsByTier):
// what the SQL store's grouped join over jobs and accounts answers, by one
// pass over the map.
import type { JobStore } from '../types.ts';
import type { StoredJob } from './open-jobs.ts';

export function createMemoryJobTierCounts(jobs: Map<string, StoredJob>, tierOf: (accountId: string) => string): Pick<JobStore, 'countJobsByTier'> {
  return {
    async countJobsByTier(statuses) {
      const wanted = new Set(statuses);
      const groups = new Map<string, { tier: string; status: string; count: number; oldest_created_at: number }>();
      for (const j of jobs.values()) {
        if (!wanted.has(j.status)) continue;
        const tier = tierOf(j.account_id);
        const key = JSON.stringify([tier, j.status]);
        const group = groups.get(key);
        if (group) {
          group.count++;
          group.oldest_created_at = Math.min(group.oldest_created_at, j.created_at);
        } else groups.set(key, { tier, status: j.status, count: 1, oldest_created_at: j.created_at });
      }
      return [...groups.values()];
    },
  };
}
