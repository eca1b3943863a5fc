// The Job and Output objects of the v2 contract, built from stored rows. Every
// field is always present (null when not known yet), and the follow-up links
// are host-relative, carrying the prefix the service is mounted under.
import { isUuid } from '../../lib/uuid.ts';
import type { AccountRecord, AssetRecord, JobSummary } from '../../storage/types.ts';
import { signedContentUrl } from '../assets/view.ts';
import type { ServiceBase, ServiceContext } from '../context.ts';
import { notFound } from '../errors.ts';
import { linkBase, mountPrefix } from '../http/links.ts';
import { isoTime, isoTimeOrNull } from '../iso-time.ts';
import type { JobView, OutputView } from './job-schema.ts';
import { toOutputAsset } from './outputs.ts';
import { isTerminal, type JobStatus } from './state-machine.ts';
import { scrubTraceback } from './traceback.ts';

export const jobPath = (id: string) => `/api/v2/jobs/${id}`;

/**
 * What the run of an unfinished job published last, when it runs on this
 * instance: its row takes the first save only one progress interval into
 * the run, and later ones at most once per interval (runner.ts).
 */
function liveProgress(ctx: ServiceBase, job: JobSummary): object | undefined {
  if (job.status !== 'running' && job.status !== 'canceling') return undefined;
  // Views are also built where no job system runs (ServiceBase alone): then the row is all there is.
  return (ctx as Partial<Pick<ServiceContext, 'jobs'>>).jobs?.liveProgress(job.id);
}

/** The recorded JobError, its traceback without server paths (also in rows written before they were scrubbed). */
function errorOf(error: JobSummary['error']): JobView['error'] {
  if (error === null || typeof error.traceback !== 'string') return error as JobView['error'];
  return { ...error, traceback: scrubTraceback(error.traceback) } as JobView['error'];
}

/**
 * A finished job is visible until its retention deadline, then answers 404
 * like an unknown id. One not finished yet stays visible (and cancelable)
 * until it ends: the sweep fails a queued one whose deadline passed.
 */
export function isRetained(job: Pick<JobSummary, 'status' | 'expires_at'>, now: number): boolean {
  if (job.status === 'expired') return false;
  return !isTerminal(job.status as JobStatus) || job.expires_at > now;
}

/** The caller's retained job, or 404 (also for a malformed id or another account's job). */
export async function findOwnJob(ctx: ServiceContext, account: AccountRecord, id: string): Promise<JobSummary> {
  const job = isUuid(id) ? await ctx.metadata.getJob(account.id, id.toLowerCase()) : null;
  if (!job || !isRetained(job, ctx.now())) throw notFound('No job with this id.');
  return job;
}

/** `base` is `linkBase(ctx, request)`, worked out once for all the outputs of a job. */
function outputOf(ctx: ServiceBase, base: string, asset: AssetRecord): OutputView {
  const { url, url_expires_at } = signedContentUrl(ctx, base, asset);
  // Not `{ ...output, url }`: V8 (Node 20) gives each object spread then extended a hidden class of its own.
  return Object.assign(toOutputAsset(asset), { url, url_expires_at, job_id: asset.job_id });
}

export async function outputView(ctx: ServiceContext, request: Request, asset: AssetRecord): Promise<OutputView> {
  return outputOf(ctx, linkBase(ctx, request), asset);
}

export interface JobViewOptions {
  /** Already known, e.g. counted at submission; otherwise counted for a queued job. */
  queuePosition?: number | null;
  /** Already loaded outputs; otherwise read from storage. */
  outputs?: AssetRecord[];
}

/**
 * Where a view's links start when no request asks for it (a webhook): the
 * mount prefix of host-relative links and the origin-and-prefix of absolute
 * ones (both from publicBaseUrl, or '' for links relative to the host).
 */
export interface ViewLinks {
  prefix: string;
  base: string;
}

/** The Job as GET /api/v2/jobs/{id} shows it, its links for `request` (or as `links` say, for a message sent without one). */
export async function jobView(ctx: ServiceBase, request: Request | ViewLinks, job: JobSummary, opts: JobViewOptions = {}): Promise<JobView> {
  // A job that never started, or none of whose outputs was ever committed (view version 0), has
  // none; only a queued one has a position: no query for those.
  const wantsPosition = opts.queuePosition === undefined && job.status === 'queued';
  const wantsOutputs = opts.outputs === undefined && job.started_at !== null && job.view_version !== 0;
  const [position, outputs] =
    wantsPosition || wantsOutputs
      ? await Promise.all([
          wantsPosition ? ctx.metadata.countQueuedBefore(job) : (opts.queuePosition ?? null),
          wantsOutputs ? ctx.metadata.listJobAssets(job.account_id, job.id) : (opts.outputs ?? []),
        ])
      : [opts.queuePosition ?? null, opts.outputs ?? []];
  const links = 'base' in request ? request : null;
  const self = `${links ? links.prefix : mountPrefix(ctx, request as Request)}${jobPath(job.id)}`;
  const base = outputs.length === 0 ? '' : links ? links.base : linkBase(ctx, request as Request);
  return {
    id: job.id,
    status: job.status as JobView['status'],
    created_at: isoTime(job.created_at),
    started_at: isoTimeOrNull(job.started_at),
    completed_at: isoTimeOrNull(job.completed_at),
    expires_at: isoTime(job.expires_at),
    queue_position: job.status === 'queued' ? position : null,
    progress: (liveProgress(ctx, job) ?? job.progress) as JobView['progress'],
    outputs: outputs.length === 0 ? [] : outputs.map((a) => outputOf(ctx, base, a)),
    error: errorOf(job.error),
    metrics: {
      queue_ms: job.started_at === null ? null : job.started_at - job.created_at,
      execution_ms: job.started_at === null || job.completed_at === null ? null : job.completed_at - job.started_at,
    },
    priority: job.priority,
    metadata: job.metadata,
    outputs_reused: job.outputs_reused,
    urls: { self, events: `${self}/events`, cancel: `${self}/cancel` },
  };
}
