// At start, jobs a crashed process left `running` or `canceling` are settled:
// a cancel in progress completes, a run starts over from the queue (it keeps
// its `seq`, so it goes first in its account's line), or fails with a clear
// error if the operator prefers that over running anything twice.
//
// It assumes this is the only instance executing jobs on this storage: with
// several, a starting instance cannot tell a dead owner from a live one and
// would take over the other's running jobs. That needs leases, which come
// with the shared scale-out storage.
import type { ServiceBase } from '../context.ts';
import { INTERRUPTED_ERROR } from './job-errors.ts';
import { transition } from './state-machine.ts';

const BATCH = 500;

export async function recoverInterruptedJobs(ctx: ServiceBase, policy: 'rerun' | 'fail'): Promise<number> {
  let settled = 0;
  for (;;) {
    const jobs = await ctx.metadata.listJobsByStatus(['running', 'canceling'], BATCH);
    let moved = 0;
    for (const job of jobs) {
      const now = ctx.now();
      let ok: boolean;
      if (job.status === 'canceling') {
        ok = await ctx.metadata.transitionJob(job.id, 'canceling', transition('canceling', 'canceled'), { completed_at: now });
      } else if (policy === 'rerun') {
        ok = await ctx.metadata.transitionJob(job.id, 'running', transition('running', 'requeue'), {
          started_at: null,
          progress: null,
          outputs_reused: false,
        });
      } else {
        ok = await ctx.metadata.transitionJob(job.id, 'running', transition('running', 'fail'), {
          completed_at: now,
          error: INTERRUPTED_ERROR,
        });
      }
      if (ok) moved++;
    }
    settled += moved;
    if (moved > 0) ctx.logger.info('recovered interrupted jobs', { count: moved, policy });
    if (jobs.length < BATCH || moved === 0) return settled;
  }
}
