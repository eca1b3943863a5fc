// A finished job's temporary files (PreviewImage's images, the reference's
// `type: "temp"`) as history and /jobs/{id} list them. They are files of the
// account, not outputs of the job, kept for a day and never past the job
// (core/jobs/outputs.ts); the job row names them (temp_asset_ids). The
// reference keeps its temp files and its history alike until it restarts, so
// every reference its history gives can be fetched; here a job outlives its
// previews, so an entry lists the ones still kept and leaves out those gone
// (expired or deleted): whatever history names, /view serves.
import type { AssetRecord, JobSummary } from '../../storage/types.ts';
import type { ServiceBase } from '../context.ts';

/** What history lists of a finished job: its outputs and its temporary files still kept. */
export interface JobFiles {
  outputs: AssetRecord[];
  temps: AssetRecord[];
}

export async function jobFiles(ctx: Pick<ServiceBase, 'metadata' | 'now'>, job: JobSummary): Promise<JobFiles> {
  const [outputs, temps] = await Promise.all([ctx.metadata.listJobAssets(job.account_id, job.id), keptTempFiles(ctx, job)]);
  return { outputs, temps };
}

/** The job's temporary files still kept, in the order the run committed them. */
export async function keptTempFiles(ctx: Pick<ServiceBase, 'metadata' | 'now'>, job: JobSummary): Promise<AssetRecord[]> {
  if (job.temp_asset_ids.length === 0) return [];
  const now = ctx.now();
  const found = await Promise.all(job.temp_asset_ids.map((id) => ctx.metadata.getAsset(job.account_id, id, now)));
  return found.filter((a): a is AssetRecord => a !== null);
}
