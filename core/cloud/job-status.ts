// GET /job/{prompt_id}/status: where a job is, in the cloud's five statuses,
// with its id and timestamps (JobStatusResponse of the cloud contract, plus
// started_at/completed_at). Another account's job, an expired one and an
// unknown id are the same 404.
import type { JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { isoTime, isoTimeOrNull } from '../iso-time.ts';
import { findOwnJob } from '../jobs/view.ts';
import { cloudAccount } from './auth.ts';
import { cloudStatus } from './status.ts';

/** The latest moment the row is known to have changed. */
export const updatedAt = (job: JobSummary) => Math.max(job.created_at, job.started_at ?? 0, job.completed_at ?? 0);

/** The message a failed job's error record carries, else null. */
export function errorMessage(job: JobSummary): string | null {
  return job.status === 'failed' && typeof job.error?.message === 'string' ? job.error.message : null;
}

export async function getJobStatus(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const job = await findOwnJob(ctx, account, id);
  const updated = isoTime(updatedAt(job));
  return Response.json(
    {
      id: job.id,
      status: cloudStatus(job.status),
      created_at: isoTime(job.created_at),
      updated_at: updated,
      last_state_update: updated,
      started_at: isoTimeOrNull(job.started_at),
      completed_at: isoTimeOrNull(job.completed_at),
      assigned_inference: null,
      error_message: errorMessage(job),
    },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}
