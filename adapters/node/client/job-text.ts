// One-line descriptions of jobs for the terminal: why a job did not succeed
// (its JobError: code, node, message), and the short forms the jobs table uses.
import type { Job } from './types.ts';

/** e.g. "job 1f2e… failed: node_execution_error at node 3 (Fail): cannot do that". */
export function jobFailure(job: Job): string {
  const error = job.error;
  if (!error) return `job ${job.id} ${job.status}`;
  const node = error.node_id ? ` at node ${error.node_id}${error.class_type ? ` (${error.class_type})` : ''}` : '';
  return `job ${job.id} ${job.status}: ${error.code}${node}: ${error.message}`;
}

/** A date-time as "YYYY-MM-DD HH:MM:SS" in UTC, or as given when it does not parse. */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().slice(0, 19).replace('T', ' ');
}
