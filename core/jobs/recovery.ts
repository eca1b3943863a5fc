// Jobs whose runner is gone are settled: a cancel in progress completes, a
// run starts over from the queue (it keeps its `seq`, so it goes first in its
// account's line), or fails with a clear error if the operator prefers that
// over running anything twice.
//
// Which jobs those are depends on the storage:
// - one runner per storage (claimRunner: SQLite, an exclusive PostgreSQL):
//   at start, every job left running or canceling is a crash's leftover;
// - runners sharing the storage: only jobs whose lease expired (their
//   runner stopped renewing it), taken back by any live runner now and
//   then. Each move is guarded by the lease it saw, so a runner that renews
//   meanwhile keeps its job, and two runners never both take one back.
import type { JobSummary } from '../../storage/types.ts';
import type { ServiceBase } from '../context.ts';
import { INTERRUPTED_ERROR } from './job-errors.ts';
import { transition } from './state-machine.ts';

const BATCH = 500;

/** Every job left running or canceling: for a runner that is the storage's only one, at start. */
export function recoverInterruptedJobs(ctx: ServiceBase, policy: 'rerun' | 'fail'): Promise<number> {
  return settleAll(ctx, policy, () => ctx.metadata.listJobsByStatus(['running', 'canceling'], BATCH), false);
}

/** Jobs whose lease has expired, whoever held them: for runners sharing the storage. */
export function recoverExpiredLeases(ctx: ServiceBase, policy: 'rerun' | 'fail'): Promise<number> {
  return settleAll(ctx, policy, () => ctx.metadata.listExpiredLeases(ctx.now(), BATCH), true);
}

async function settleAll(ctx: ServiceBase, policy: 'rerun' | 'fail', list: () => Promise<JobSummary[]>, expiredOnly: boolean): Promise<number> {
  let settled = 0;
  for (;;) {
    const jobs = await list();
    let moved = 0;
    for (const job of jobs) if (await settle(ctx, job, policy, expiredOnly)) moved++;
    settled += moved;
    if (moved > 0) ctx.logger.info('recovered interrupted jobs', { count: moved, policy, expired_leases: expiredOnly });
    if (jobs.length < BATCH || moved === 0) return settled;
  }
}

function settle(ctx: ServiceBase, job: JobSummary, policy: 'rerun' | 'fail', expiredOnly: boolean): Promise<JobSummary | null> {
  const now = ctx.now();
  // The lease as it was read: a renewal or another runner's move since then makes the write miss.
  const guard = expiredOnly ? { lease_expired_before: now, ...(job.lease && { lease_token: job.lease.token }) } : {};
  if (job.status === 'canceling') {
    return ctx.metadata.transitionJob(job.id, 'canceling', transition('canceling', 'canceled'), { completed_at: now, lease: null }, guard);
  }
  if (policy === 'rerun') {
    const patch = { started_at: null, progress: null, outputs_reused: false, lease: null } as const;
    return ctx.metadata.transitionJob(job.id, 'running', transition('running', 'requeue'), patch, guard);
  }
  return ctx.metadata.transitionJob(
    job.id,
    'running',
    transition('running', 'fail'),
    { completed_at: now, error: INTERRUPTED_ERROR, lease: null },
    guard,
  );
}
