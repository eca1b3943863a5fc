// Admission of a checked workflow: the scheduler's verdict (credits, queue
// depth) and the durable `queued` row under the request's Idempotency-Key,
// whose insert has the last word on queue depth.
// The checks before it are the submission use case's (submit-workflow.ts).
import { newId } from '../../lib/uuid.ts';
import type { AccountRecord, JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { withIdempotency } from '../idempotency.ts';

export interface Enqueue {
  workflow: Record<string, unknown>;
  /** What the runner hands the engine (the partner-node key); never stored. */
  extra?: Record<string, unknown>;
  /** A job id the client chose; it must not be in use (a duplicate makes createJob throw). */
  id?: string;
  priority?: number;
  metadata?: Record<string, unknown> | null;
}

/**
 * Admits and stores a checked workflow as a `queued` job under the request's
 * Idempotency-Key. Resolves to the row and how many jobs were queued ahead of it.
 */
export async function enqueueJob(
  ctx: ServiceContext,
  request: Request,
  account: AccountRecord,
  { workflow, extra, id = newId(), priority = 0, metadata = null }: Enqueue,
): Promise<{ job: JobSummary; ahead: number }> {
  return withIdempotency(ctx, request, account, async (commitment) => {
    await ctx.jobs.scheduler.admit(account.id);
    // In place before the row exists: the scheduler may start the job at once.
    if (extra) ctx.jobs.extraData.set(id, extra);
    const now = ctx.now();
    let queued;
    try {
      // The insert counts the queue as one step for every instance: its bounds hold.
      queued = await ctx.jobs.scheduler.enqueue({
        id,
        account_id: account.id,
        status: 'queued',
        workflow,
        priority,
        metadata,
        created_at: now,
        expires_at: now + ctx.config.jobRetentionMs,
      });
    } catch (err) {
      ctx.jobs.extraData.delete(id);
      throw err;
    }
    const { job, ahead, started } = queued;
    commitment.committed();
    ctx.jobs.hub.announce(job, 'queued');
    queued.start(); // its running after its queueing
    ctx.jobs.queued(started);
    return { job, ahead };
  });
}
