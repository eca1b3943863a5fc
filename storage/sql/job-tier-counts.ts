// The SQL JobStore's counts by status and account tier (countJobsByTier),
// for the operator's gauges: one grouped read. Jobs are first grouped by
// account along the (account_id, status) index, so the join to accounts
// touches one row per account and status, not one per job.
import type { Kysely } from 'kysely';
import type { JobStore, JobTierCount } from '../types.ts';
import { type Database, toNumber } from './schema.ts';

/** What upsertAccount gives an account without a tier, and so an account without a row. */
const DEFAULT_TIER = 'default';

export function createSqlJobTierCounts(db: Kysely<Database>): Pick<JobStore, 'countJobsByTier'> {
  return {
    async countJobsByTier(statuses) {
      // `IN ()` is a syntax error on PostgreSQL.
      if (statuses.length === 0) return [];
      const rows = await db
        .selectFrom((eb) =>
          eb
            .selectFrom('jobs')
            .select((e) => ['jobs.account_id', 'jobs.status', e.fn.countAll().as('n'), e.fn.min('jobs.created_at').as('oldest')])
            .where('jobs.status', 'in', statuses)
            .groupBy(['jobs.account_id', 'jobs.status'])
            .as('per_account'),
        )
        .leftJoin('accounts', 'accounts.id', 'per_account.account_id')
        .select((e) => ['accounts.tier', 'per_account.status', e.fn.sum('per_account.n').as('n'), e.fn.min('per_account.oldest').as('oldest')])
        .groupBy(['accounts.tier', 'per_account.status'])
        .execute();
      // An account without a row (tier null) joins the `default` group.
      const groups = new Map<string, JobTierCount>();
      for (const r of rows) {
        const tier = r.tier ?? DEFAULT_TIER;
        const count = toNumber(r.n as number | string | bigint);
        const oldest = toNumber(r.oldest as number | string | bigint);
        const key = JSON.stringify([tier, r.status]);
        const group = groups.get(key);
        if (group) {
          group.count += count;
          group.oldest_created_at = Math.min(group.oldest_created_at, oldest);
        } else groups.set(key, { tier, status: r.status, count, oldest_created_at: oldest });
      }
      return [...groups.values()];
    },
  };
}
