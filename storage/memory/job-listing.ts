// The memory JobStore's account listings (the cloud surface's job list,
// history and queue): one account's jobs by status, retention, output kind
// and whether they are still in its history, in the query's order, a page
// at a time. The only job reads that look at assets.
import type { AccountJobFilter, AccountJobQuery, AssetRecord, JobStore, JobSummary } from '../types.ts';
import type { StoredJob } from './open-jobs.ts';

/** What the `output_type` filter reads of an asset row. */
export type OutputRow = Pick<AssetRecord, 'account_id' | 'job_id'> & { output_type?: string | null };

type JobListing = Pick<JobStore, 'listAccountJobs' | 'countAccountJobs'>;

/** `copy`: the job store's read of a job, a deep copy with its view version, as every read of the store gives. */
export function createMemoryJobListing(
  jobs: Map<string, StoredJob>,
  assets: () => Iterable<OutputRow>,
  copy: (job: StoredJob) => JobSummary,
): JobListing {
  /** The account's jobs matching the filter, by seq. */
  function accountJobs(accountId: string, f: AccountJobFilter & Pick<AccountJobQuery, 'before_seq'>): StoredJob[] {
    const wanted = new Set(f.statuses);
    let withOutput: Set<string> | undefined;
    if (f.output_type !== undefined) {
      withOutput = new Set();
      for (const a of assets()) if (a.account_id === accountId && a.output_type === f.output_type && a.job_id) withOutput.add(a.job_id);
    }
    return [...jobs.values()]
      .filter(
        (j) =>
          j.account_id === accountId &&
          wanted.has(j.status) &&
          (f.expires_after === undefined || j.expires_at > f.expires_after) &&
          (f.before_seq === undefined || j.seq < f.before_seq) &&
          (!f.in_history || j.history_hidden_at === null) &&
          (withOutput === undefined || withOutput.has(j.id)),
      )
      .sort((x, y) => x.seq - y.seq);
  }

  return {
    async listAccountJobs(accountId, q: AccountJobQuery) {
      const sign = q.order === 'asc' ? 1 : -1;
      const duration = (j: StoredJob) => (j.started_at === null || j.completed_at === null ? null : j.completed_at - j.started_at);
      const list = accountJobs(accountId, q).sort((x, y) => {
        if (q.sort === 'execution_time') {
          const [dx, dy] = [duration(x), duration(y)];
          if (dx === null || dy === null) {
            if (dx !== dy) return dx === null ? 1 : -1; // without one: last either way
          } else if (dx !== dy) return sign * (dx - dy);
        }
        return sign * (x.seq - y.seq);
      });
      const offset = q.offset ?? 0;
      return list.slice(offset, offset + q.limit).map(copy);
    },
    async countAccountJobs(accountId, filter) {
      return accountJobs(accountId, filter).length;
    },
  };
}
