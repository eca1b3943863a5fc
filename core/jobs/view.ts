// The Job and Output objects of the v2 contract, built from stored rows. Every
// field is always present (null when not known yet), and the follow-up links
// are host-relative, carrying the prefix the service is mounted under.
import type { AccountRecord, AssetRecord, JobRecord } from '../../storage/types.ts';
import type { JobView, OutputView } from './job-schema.ts';
import { toOutputAsset } from './outputs.ts';
import { isTerminal, type JobStatus } from './state-machine.ts';
import { assetView } from '../assets/view.ts';
import { mountPrefix, type ServiceContext } from '../context.ts';
import { notFound } from '../errors.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const jobPath = (id: string) => `/api/v2/jobs/${id}`;

/**
 * A finished job is visible until its retention deadline, then answers 404
 * like an unknown id. One not finished yet stays visible (and cancelable)
 * until it ends: the sweep fails a queued one whose deadline passed.
 */
export function isRetained(job: JobRecord, now: number): boolean {
  if (job.status === 'expired') return false;
  return !isTerminal(job.status as JobStatus) || job.expires_at > now;
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The caller's retained job, or 404 (also for a malformed id or another account's job). */
export async function findOwnJob(ctx: ServiceContext, account: AccountRecord, id: string): Promise<JobRecord> {
  const job = JOB_ID.test(id) ? await ctx.metadata.getJob(account.id, id.toLowerCase()) : null;
  if (!job || !isRetained(job, ctx.now())) throw notFound('No job with this id.');
  return job;
}

export async function outputView(ctx: ServiceContext, request: Request, asset: AssetRecord): Promise<OutputView> {
  const a = await assetView(ctx, request, asset);
  return {
    ...toOutputAsset(asset),
    url: a.url,
    url_expires_at: a.url_expires_at,
    job_id: asset.job_id,
  };
}

export interface JobViewOptions {
  /** Already known, e.g. counted at submission; otherwise counted for a queued job. */
  queuePosition?: number | null;
  /** Already loaded outputs; otherwise read from storage. */
  outputs?: AssetRecord[];
}

export async function jobView(
  ctx: ServiceContext,
  request: Request,
  job: JobRecord,
  opts: JobViewOptions = {},
): Promise<JobView> {
  const [position, outputs] = await Promise.all([
    opts.queuePosition !== undefined
      ? opts.queuePosition
      : job.status === 'queued'
        ? ctx.metadata.countQueuedBefore(job.seq)
        : null,
    opts.outputs ?? (job.started_at === null ? [] : ctx.metadata.listJobAssets(job.account_id, job.id)),
  ]);
  const self = `${mountPrefix(ctx)}${jobPath(job.id)}`;
  return {
    id: job.id,
    status: job.status as JobView['status'],
    created_at: iso(job.created_at)!,
    started_at: iso(job.started_at),
    completed_at: iso(job.completed_at),
    expires_at: iso(job.expires_at)!,
    queue_position: job.status === 'queued' ? position : null,
    progress: job.progress as JobView['progress'],
    outputs: await Promise.all(outputs.map((a) => outputView(ctx, request, a))),
    error: job.error as JobView['error'],
    metrics: {
      queue_ms: job.started_at === null ? null : job.started_at - job.created_at,
      execution_ms: job.started_at === null || job.completed_at === null ? null : job.completed_at - job.started_at,
    },
    urls: { self, events: `${self}/events`, cancel: `${self}/cancel` },
  };
}
