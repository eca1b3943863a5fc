// Retention: expired assets stop being served at once (reads filter on
// expires_at); this sweep deletes their records, collects blobs nothing
// references any more, drops idempotency keys past their 24 hours, and marks
// finished jobs past their retention `expired` (their outputs expire with them),
// and deletes video tasks past theirs and webhook deliveries that ended long
// enough ago. It also sets right the SQL store's counts of queued jobs, should
// one have gone wrong. Asked to, it also lists the blob store for files a crash left
// without their row (assets/orphans.ts).

import { collectBlob } from './assets/ingest.ts';
import { removeOrphanBlobs } from './assets/orphans.ts';
import type { ServiceContext } from './context.ts';
import { EXPIRED_ERROR } from './jobs/job-errors.ts';
import { TERMINAL, transition } from './jobs/state-machine.ts';
import type { SweepResult } from './types.ts';

const BATCH = 500;

const ENDED = [...TERMINAL].filter((s) => s !== 'expired');

export async function sweep(ctx: ServiceContext, opts: { orphans: boolean }): Promise<SweepResult> {
  const now = ctx.now();
  let jobsExpired = 0;
  // Queued past the deadline: failed now (oldest first, which is also earliest deadline
  // with one retention setting), and expired with the finished ones below once due.
  for (let more = true; more; ) {
    const queued = await ctx.metadata.listJobsByStatus(['queued'], BATCH);
    const due = queued.filter((j) => j.expires_at <= now);
    for (const job of due) {
      if (await ctx.metadata.transitionJob(job.id, 'queued', transition('queued', 'fail'), { completed_at: now, error: EXPIRED_ERROR })) {
        ctx.jobs.extraData.delete(job.id);
        ctx.jobs.hub.announce(job, 'failed', EXPIRED_ERROR);
      }
    }
    more = queued.length === BATCH && due.length === queued.length;
  }
  // Counts of queued jobs kept apart from the jobs (SQL) are set right if they went wrong.
  const fixes = (await ctx.metadata.repairQueueCounts?.()) ?? [];
  for (const fix of fixes) ctx.logger.warn('corrected the count of queued jobs of an account', { ...fix });
  // An account that was counted at 0 has jobs to run.
  if (fixes.length > 0) ctx.jobs.scheduler.kick();
  for (;;) {
    const ids = await ctx.metadata.expireJobs(ENDED, now, BATCH);
    jobsExpired += ids.length;
    if (ids.length < BATCH) break;
  }
  let expired = 0;
  for (;;) {
    const keys = await ctx.metadata.deleteExpiredAssets(now, BATCH);
    expired += keys.length;
    if (keys.length < BATCH) break;
  }
  await ctx.metadata.deleteExpiredIdempotencyKeys(now);
  // Video tasks past retention (their output assets expire on their own, above).
  while ((await ctx.metadata.deleteExpiredVideoTasks(now, BATCH)).length === BATCH);
  // Deliveries that ended (delivered or given up) are kept a while for inspection, then go.
  while ((await ctx.metadata.deleteEndedWebhookDeliveries(now - ctx.config.webhookDelivery.retentionMs, BATCH)) === BATCH);
  let removed = 0;
  for (;;) {
    const keys = await ctx.metadata.listUnreferencedBlobs(BATCH);
    let progress = 0;
    for (const key of keys) if (await collectBlob(ctx, key)) progress++;
    removed += progress;
    // Stop when a batch frees nothing, so a blob re-referenced meanwhile cannot loop us.
    if (keys.length < BATCH || progress === 0) break;
  }
  const orphans = opts.orphans ? await sweepOrphans(ctx) : 0;
  return { expired, blobs_removed: removed, jobs_expired: jobsExpired, orphans_removed: orphans };
}

/** Removes blob files without a row past the grace period, and says how many in the log. */
export async function sweepOrphans(ctx: ServiceContext): Promise<number> {
  const count = await removeOrphanBlobs(ctx, ctx.config.orphanBlobGraceMs);
  if (count > 0) ctx.logger.info('removed blob files that had no row', { count, grace_seconds: ctx.config.orphanBlobGraceMs / 1000 });
  return count;
}
