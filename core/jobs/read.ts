// GET /api/v2/jobs/{id}, GET /api/v2/jobs/{id}/workflow and
// POST /api/v2/jobs/{id}/cancel. Another account's job, an expired one and an
// unknown id all answer the same 404.

import { stringifyJson } from '../../lib/json.ts';
import type { JobStamp, JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { notFound } from '../errors.ts';
import { linkBase, mountPrefix } from '../http/links.ts';
import { jsonResponse, jsonTextResponse } from '../http/request-options.ts';
import { signedUrlExpiry } from '../signing.ts';
import { canTransition, isTerminal, type JobStatus, transition } from './state-machine.ts';
import { findOwnJob, isRetained, jobView } from './view.ts';
import { jobWorkflow } from './workflows.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** What a finished job's view depends on besides its rows: where its links point and their signatures' expiry step. */
function viewKey(ctx: ServiceContext, request: Request): string {
  return `${linkBase(ctx, request)}\n${mountPrefix(ctx, request)}\n${signedUrlExpiry(ctx.now(), ctx.config.signedUrlTtlSeconds)}`;
}

export async function getJob(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const { views } = ctx.jobs;
  const jobId = id.toLowerCase();
  const key = viewKey(ctx, request);
  let stamp: JobStamp | null = null;
  // Taken before the stamp is read: anything committed after it moves it.
  let mark: string | undefined;
  // A view of it is kept: one small read says whether it still holds.
  if (views.has(jobId)) {
    mark = ctx.metadata.commitMark?.();
    // Nothing committed anywhere since a read found it current: it still is, stamp and all.
    const kept = mark === undefined ? undefined : views.unchanged(jobId, account.id, key, mark);
    stamp = kept?.stamp ?? (await ctx.metadata.getJobStamp(account.id, jobId));
    if (!stamp || !isRetained(stamp, ctx.now())) throw notFound('No job with this id.');
    const text = kept?.text ?? views.get(jobId, account.id, key, stamp, mark);
    if (text !== undefined) return jsonTextResponse(request, text, { headers: NO_STORE });
  }
  const job = await findOwnJob(ctx, account, id);
  if (!isTerminal(job.status as JobStatus)) return jsonResponse(request, await jobView(ctx, request, job), { headers: NO_STORE });
  // Finished: kept under a stamp read before its outputs (the one above, if read), so a change of them after it is a later version.
  if (stamp === null) {
    mark = ctx.metadata.commitMark?.();
    stamp = await ctx.metadata.getJobStamp(account.id, job.id);
  }
  if (!stamp) throw notFound('No job with this id.');
  const outputs = await ctx.metadata.listJobAssets(account.id, job.id);
  const text = stringifyJson(await jobView(ctx, request, job, { outputs })) as string;
  views.set(job.id, { account_id: account.id, key, stamp, text, mark });
  return jsonTextResponse(request, text, { headers: NO_STORE });
}

export async function getJobWorkflow(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const job = await findOwnJob(ctx, account, id);
  // Only the graph is stored: extra_data (a credential) never reaches the row.
  const workflow = await jobWorkflow(ctx.metadata, job);
  if (!workflow) throw notFound('No job with this id.');
  return jsonResponse(request, { workflow, format: 'api' }, { headers: NO_STORE });
}

/** Moves the job one step toward canceled; returns the row as it is afterwards. */
export async function requestCancel(ctx: ServiceContext, job: JobSummary): Promise<JobSummary> {
  // A few rounds: the row may move (queued -> running) between the read and the CAS.
  for (let round = 0; round < 5; round++) {
    const from = job.status as JobStatus;
    if (!canTransition(from, 'cancel')) return job;
    const to = transition(from, 'cancel');
    const patch = to === 'canceled' ? { completed_at: ctx.now() } : {};
    if (await ctx.metadata.transitionJob(job.id, from, to, patch)) {
      // A running job stops at its next node or step boundary; another instance notices through its poll.
      if (to === 'canceling') ctx.jobs.abortLocal(job.id);
      else ctx.jobs.extraData.delete(job.id); // it will never run: the credential goes now
      ctx.jobs.hub.announce(job, to);
    }
    const fresh = await ctx.metadata.getJob(job.account_id, job.id);
    if (!fresh) throw notFound('No job with this id.');
    job = fresh;
  }
  return job;
}

export async function cancelJob(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const job = await requestCancel(ctx, await findOwnJob(ctx, account, id));
  return jsonResponse(request, await jobView(ctx, request, job), { headers: NO_STORE });
}
