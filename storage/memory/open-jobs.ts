// The memory job store's index of jobs not finished yet: each account's
// queue kept in pick order and its count of jobs holding a slot. The
// scheduler's reads (claim, queue counts and positions) touch only these;
// finished jobs pile up until their retention ends, and scanning them on
// every claim made the memory store slower than SQLite on a busy queue.
import type { JobSummary } from '../types.ts';

/** A job as the memory store keeps it: its view version lives with the assets (viewVersionOf) and is added as it is read. */
export type StoredJob = Omit<JobSummary, 'view_version'>;

/** Statuses that hold one of the account's slots, and that a lease covers. */
export const ACTIVE = new Set(['running', 'canceling']);
const QUEUED = 'queued';
/** A job in one of these has not finished: queued, or holding a slot. */
export const OPEN = new Set([QUEUED, ...ACTIVE]);

/** An account's queue in pick order: higher priority first, FIFO within one. */
export const byPick = (x: StoredJob, y: StoredJob) => y.priority - x.priority || x.seq - y.seq;

export interface OpenJobs {
  /** Moves the job to `status`, keeping the index; every status change goes through here. */
  setStatus(job: StoredJob, status: string): void;
  /** Every open job (queued or active), in no particular order. */
  all(): IterableIterator<StoredJob>;
  /** The account's queued jobs in pick order (the store's own array: read, never keep). */
  queue(accountId: string): readonly StoredJob[];
  queues(): IterableIterator<[string, readonly StoredJob[]]>;
  active(accountId: string): number;
  queuedCount(accountId?: string): number;
}

export function createOpenJobs(): OpenJobs {
  const open = new Set<StoredJob>();
  const queues = new Map<string, StoredJob[]>();
  const active = new Map<string, number>();
  let queued = 0;

  function enqueue(job: StoredJob) {
    let q = queues.get(job.account_id);
    if (!q) queues.set(job.account_id, (q = []));
    // Binary search for the first job that picks after this one; new jobs mostly land at the end.
    let lo = 0;
    let hi = q.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byPick(q[mid], job) < 0) lo = mid + 1;
      else hi = mid;
    }
    q.splice(lo, 0, job);
    queued++;
  }

  function dequeue(job: StoredJob) {
    const q = queues.get(job.account_id)!;
    const at = q[0] === job ? 0 : q.indexOf(job);
    q.splice(at, 1);
    if (q.length === 0) queues.delete(job.account_id);
    queued--;
  }

  const count = (accountId: string, by: number) => {
    const n = (active.get(accountId) ?? 0) + by;
    if (n === 0) active.delete(accountId);
    else active.set(accountId, n);
  };

  return {
    setStatus(job, status) {
      // A new row comes in with its status already set and is not in the index yet.
      const before = open.has(job) ? job.status : null;
      if (before === QUEUED) dequeue(job);
      else if (before !== null && ACTIVE.has(before)) count(job.account_id, -1);
      job.status = status;
      if (status === QUEUED) enqueue(job);
      else if (ACTIVE.has(status)) count(job.account_id, 1);
      if (OPEN.has(status)) open.add(job);
      else open.delete(job);
    },
    all: () => open.values(),
    queue: (accountId) => queues.get(accountId) ?? [],
    queues: () => queues.entries(),
    active: (accountId) => active.get(accountId) ?? 0,
    queuedCount: (accountId) => (accountId === undefined ? queued : (queues.get(accountId)?.length ?? 0)),
  };
}
