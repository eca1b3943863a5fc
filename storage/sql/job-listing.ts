// The SQL JobStore's account listings (the cloud surface's job list, history
// and queue): one account's jobs by status, retention, output kind and
// whether they are still in its history, in the query's order, a page at a
// time, without their workflows. The only job reads that look at assets (an
// EXISTS on the job's outputs).
import { type Kysely, sql } from 'kysely';
import type { AccountJobFilter, JobStore } from '../types.ts';
import { JOB_SUMMARY_COLUMNS, toJobSummary } from './rows.ts';
import { type Database, toNumber } from './schema.ts';

type JobListing = Pick<JobStore, 'listAccountJobs' | 'countAccountJobs'>;

export function createSqlJobListing(db: Kysely<Database>): JobListing {
  /** The account's jobs matching the filter (statuses non-empty: `IN ()` is a syntax error on PostgreSQL). */
  function accountJobs(accountId: string, f: AccountJobFilter) {
    let query = db.selectFrom('jobs').where('jobs.account_id', '=', accountId).where('jobs.status', 'in', f.statuses);
    if (f.expires_after !== undefined) query = query.where('jobs.expires_at', '>', f.expires_after);
    if (f.in_history) query = query.where('jobs.history_hidden_at', 'is', null);
    const outputType = f.output_type;
    if (outputType !== undefined) {
      query = query.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('assets')
            .select('assets.id')
            .whereRef('assets.job_id', '=', 'jobs.id')
            .where('assets.account_id', '=', accountId)
            .where('assets.output_type', '=', outputType),
        ),
      );
    }
    return query;
  }

  return {
    async listAccountJobs(accountId, q) {
      if (q.statuses.length === 0) return [];
      const order = q.order === 'asc' ? 'asc' : 'desc';
      let query = accountJobs(accountId, q).select(JOB_SUMMARY_COLUMNS.map((c) => `jobs.${c}` as const));
      if (q.before_seq !== undefined) query = query.where('jobs.seq', '<', q.before_seq);
      if (q.sort === 'execution_time') {
        // Jobs without a duration last in both directions (the dialects disagree on where NULLs sort).
        query = query
          .orderBy(sql`case when jobs.started_at is null or jobs.completed_at is null then 1 else 0 end`)
          .orderBy(sql`jobs.completed_at - jobs.started_at`, order);
      }
      const rows = await query
        .orderBy('jobs.seq', order)
        .limit(q.limit)
        .offset(q.offset ?? 0)
        .execute();
      return rows.map(toJobSummary);
    },
    async countAccountJobs(accountId, filter) {
      if (filter.statuses.length === 0) return 0;
      const row = await accountJobs(accountId, filter)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return toNumber(row.n);
    },
  };
}
