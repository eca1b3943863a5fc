// In-process JobStore over a map, composed into the memory metadata store.
// Every method does its check and its write without an await in between, so
// on one event loop a compare-and-set is atomic, as the SQL store's
// conditional UPDATE is. Semantics mirror storage/sql/job-store.ts.
//
// Workflows are kept apart, as JSON text, and parsed only by
// listJobWorkflows: like the SQL store's rows, every other read leaves them out.

import { parseJson, stringifyJson } from '../../lib/json.ts';
import {
  type BoundedJob,
  FRESH_JOB,
  type JobStore,
  type JobSummary,
  type LeaseFence,
  type NewJob,
  type QueueBounds,
  type QueueRefusal,
} from '../types.ts';
import { createMemoryJobListing, type OutputRow } from './job-listing.ts';
import { createMemoryJobTierCounts } from './job-tier-counts.ts';
import { ACTIVE, createOpenJobs, OPEN, type StoredJob } from './open-jobs.ts';

const EXPIRED = 'expired';
/** Progress after a job has left these statuses would overwrite a final snapshot; a lease covers them. */
const PROGRESS_STATUSES = ACTIVE;

const bySeq = (x: StoredJob, y: StoredJob) => x.seq - y.seq;

/**
 * `assets` yields every stored asset row (the asset store owns them; the
 * listings read them); `tierOf` gives an account's tier (the counts by tier);
 * `viewVersionOf` a job's view version, which the asset store bumps.
 */
export function createMemoryJobStore(
  assets: () => Iterable<OutputRow>,
  tierOf: (accountId: string) => string = () => 'default',
  viewVersionOf: (jobId: string) => number = () => 0,
): JobStore & { holdsLease(fence: LeaseFence): boolean } {
  const jobs = new Map<string, StoredJob>();
  // Deep copies in and out: JSON columns must not alias caller objects, just as a database
  // round-trip would not. Reads also add the view version the asset store keeps.
  const copy = (job: StoredJob): JobSummary => Object.assign(structuredClone(job), { view_version: viewVersionOf(job.id) });
  const workflows = new Map<string, string>();
  /** Fencing tokens by job: they outlive a lease (a release or the next claim makes a new one). */
  const tokens = new Map<string, number>();
  /** When a job of each account was last claimed (claimJob's `now`): the accounts' turns. */
  const lastClaimed = new Map<string, number>();
  let lastSeq = 0;
  const nextToken = (id: string) => {
    const token = (tokens.get(id) ?? 0) + 1;
    tokens.set(id, token);
    return token;
  };

  const open = createOpenJobs();
  const { setStatus } = open;
  const select = (pred: (j: StoredJob) => boolean) => [...jobs.values()].filter(pred).sort(bySeq);
  const selectOpen = (pred: (j: StoredJob) => boolean) => [...open.all()].filter(pred).sort(bySeq);
  /** select, through the open jobs alone when every wanted status is one of theirs. */
  const onlyOpen = (statuses: readonly string[]) => statuses.every((s) => OPEN.has(s));
  const selectStatuses = (statuses: readonly string[], pred: (j: StoredJob) => boolean) => (onlyOpen(statuses) ? selectOpen(pred) : select(pred));
  /** How many of `from` pass `pred`: a count needs neither the array nor the order of a select. */
  const countOf = (from: Iterable<StoredJob>, pred: (j: StoredJob) => boolean) => {
    let n = 0;
    for (const j of from) if (pred(j)) n++;
    return n;
  };
  const queuedOf = open.queuedCount;

  // The bounds are counted with no await before the insert: on one event loop that is one step.
  function createJob(job: NewJob): Promise<JobSummary>;
  function createJob(job: NewJob, bounds: QueueBounds): Promise<BoundedJob | QueueRefusal>;
  async function createJob(job: NewJob, bounds: QueueBounds = {}): Promise<BoundedJob | QueueRefusal> {
    if (jobs.has(job.id)) throw new Error(`job ${job.id} already exists`);
    const { maxQueued, maxQueuedPerAccount } = bounds;
    let before: number | undefined;
    if (maxQueued !== undefined) {
      const queued = queuedOf();
      if (queued >= maxQueued) return { refused: 'queue', queued, limit: maxQueued };
      before = queued;
    }
    if (maxQueuedPerAccount !== undefined) {
      const queued = queuedOf(job.account_id);
      if (queued >= maxQueuedPerAccount) return { refused: 'account', queued, limit: maxQueuedPerAccount };
    }
    const { workflow, priority = 0, metadata = null, ...fields } = job;
    const record: StoredJob = {
      ...structuredClone(fields),
      seq: ++lastSeq,
      ...FRESH_JOB,
      priority,
      metadata: structuredClone(metadata),
      outputs_reused: false,
      cached_nodes: null,
      temp_asset_ids: [],
      lease: null,
    };
    workflows.set(job.id, stringifyJson(workflow));
    jobs.set(job.id, record);
    setStatus(record, record.status);
    return before === undefined ? copy(record) : Object.assign(copy(record), { queued_before: before });
  }

  return {
    // Every write is done by the time its call returns.
    serialWrites: true,
    ...createMemoryJobListing(jobs, assets, copy),
    ...createMemoryJobTierCounts(jobs, tierOf),

    createJob,
    async getJob(accountId, id) {
      const job = jobs.get(id);
      return job && job.account_id === accountId ? copy(job) : null;
    },
    async getJobStamp(accountId, id) {
      const job = jobs.get(id);
      return job && job.account_id === accountId ? { status: job.status, expires_at: job.expires_at, view_version: viewVersionOf(id) } : null;
    },
    async getJobById(id) {
      const job = jobs.get(id);
      return job ? copy(job) : null;
    },
    async listJobWorkflows(accountId, ids) {
      const out = [];
      for (const id of ids) {
        const text = jobs.get(id)?.account_id === accountId ? workflows.get(id) : undefined;
        if (text !== undefined) out.push({ id, workflow: parseJson(text) as Record<string, unknown> });
      }
      return out;
    },

    async transitionJob(id, from, to, patch = {}, guard = {}) {
      const job = jobs.get(id);
      if (!job || job.status !== from) return null;
      if (guard.lease_token !== undefined && (tokens.get(id) ?? 0) !== guard.lease_token) return null;
      const before = guard.lease_expired_before;
      if (before !== undefined && job.lease !== null && job.lease.expires_at >= before) return null;
      const { add_attempts, lease, ...fields } = structuredClone(patch);
      // Only keys present in the patch change; an explicit null clears.
      for (const [k, v] of Object.entries(fields)) if (v !== undefined) Object.assign(job, { [k]: v });
      job.attempts += add_attempts ?? 0;
      if (lease === null) {
        job.lease = null;
        nextToken(id);
      }
      setStatus(job, to);
      return copy(job);
    },
    async saveProgress(id, progress, outputsReused, leaseToken) {
      const job = jobs.get(id);
      if (!job || !PROGRESS_STATUSES.has(job.status)) return;
      if (leaseToken !== undefined && (tokens.get(id) ?? 0) !== leaseToken) return;
      job.progress = structuredClone(progress);
      if (outputsReused !== undefined) job.outputs_reused = outputsReused;
    },

    holdsLease({ job_id, lease_token }) {
      const job = jobs.get(job_id);
      return job !== undefined && ACTIVE.has(job.status) && (tokens.get(job_id) ?? 0) === lease_token;
    },
    async claimJob({ account_id, limit, owner, now, lease_ms, alone }) {
      if (limit <= 0) return null;
      if (open.active(account_id) >= limit) return null;
      if (alone && queuedOf() !== queuedOf(account_id)) return null;
      const job = open.queue(account_id)[0];
      if (!job) return null;
      setStatus(job, 'running');
      job.started_at = now;
      job.attempts += 1;
      job.lease = { owner, token: nextToken(job.id), expires_at: now + lease_ms };
      lastClaimed.set(account_id, now);
      return Object.assign(copy(job), { workflow: parseJson(workflows.get(job.id)!) as Record<string, unknown> });
    },
    async renewLease(id, token, expiresAt) {
      const job = jobs.get(id);
      if (!job?.lease || job.lease.token !== token || !ACTIVE.has(job.status)) return null;
      job.lease.expires_at = expiresAt;
      return job.status;
    },
    async listExpiredLeases(now, limit) {
      return selectOpen((j) => ACTIVE.has(j.status) && (j.lease === null || j.lease.expires_at < now))
        .slice(0, limit)
        .map(copy);
    },

    async listJobsByStatus(statuses, limit) {
      const wanted = new Set(statuses);
      return selectStatuses(statuses, (j) => wanted.has(j.status))
        .slice(0, limit)
        .map(copy);
    },
    async listQueuedJobs(accountId, limit) {
      return open.queue(accountId).slice(0, limit).map(copy);
    },
    async listAccountsWithQueuedJobs(limit) {
      const accounts = [];
      for (const [account_id, queue] of open.queues()) {
        // Pick order puts priority first: the oldest may be anywhere in the queue.
        let oldest_seq = Infinity;
        for (const j of queue) oldest_seq = Math.min(oldest_seq, j.seq);
        accounts.push({ account_id, oldest_seq, last_claimed_at: lastClaimed.get(account_id) ?? 0, queued: queue.length });
      }
      return accounts.sort((x, y) => x.oldest_seq - y.oldest_seq).slice(0, limit);
    },
    async peekQueuedAccounts(limit) {
      const accounts = [];
      for (const [account_id, queue] of open.queues()) {
        if (accounts.length >= limit) break;
        accounts.push({ account_id, queued: queue.length });
      }
      return accounts;
    },
    async countJobs(statuses, accountId) {
      // The admission check's count, on every submission: the queues' index knows it without a scan.
      if (statuses.length === 1 && statuses[0] === 'queued') return queuedOf(accountId);
      const wanted = new Set(statuses);
      return countOf(
        onlyOpen(statuses) ? open.all() : jobs.values(),
        (j) => wanted.has(j.status) && (accountId === undefined || j.account_id === accountId),
      );
    },
    async countQueuedBefore({ seq, account_id, priority }) {
      return countOf(
        open.all(),
        (j) =>
          j.status === 'queued' && (j.account_id === account_id ? j.priority > priority || (j.priority === priority && j.seq < seq) : j.seq < seq),
      );
    },

    async hideFromHistory(accountId, statuses, ids, at) {
      const wanted = new Set(statuses);
      const named = ids === 'all' ? undefined : new Set(ids);
      let hidden = 0;
      for (const j of jobs.values()) {
        if (j.account_id !== accountId || !wanted.has(j.status) || j.history_hidden_at !== null) continue;
        if (named !== undefined && !named.has(j.id)) continue;
        j.history_hidden_at = at;
        hidden++;
      }
      return hidden;
    },

    async expireJobs(terminalStatuses, now, limit) {
      // `expired` is never a source, so a second sweep finds nothing to report.
      const from = new Set(terminalStatuses.filter((s) => s !== EXPIRED));
      const due = [...jobs.values()]
        .filter((j) => from.has(j.status) && j.expires_at <= now)
        .sort((x, y) => x.expires_at - y.expires_at || x.seq - y.seq)
        .slice(0, limit);
      for (const j of due) setStatus(j, EXPIRED);
      return due.map((j) => j.id);
    },
  };
}
