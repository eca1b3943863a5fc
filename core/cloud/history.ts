// GET /history (`max_items`, `offset`) and GET /history/{prompt_id}: the
// caller's finished jobs, newest first, as the reference engine's
// `{prompt_id: {prompt, outputs, status, meta}}` map (outputs as
// `{filename, subfolder, type}` references /view serves, previews as `temp`
// while they are kept: core/cloud/temp-files.ts). A job not finished
// yet, an unknown id or another account's job give `{}`, as the reference
// answers for an id it has no history of; so does a job the caller took out
// of its history (POST /history, history-manage.ts). `max_items` defaults to
// 100; a larger number than 1000 gets 1000 (the reference takes any number,
// and its default is everything it keeps).
// Each entry carries its workflow, which may weigh megabytes: the jobs are
// listed without them, and the body is written as the workflows are read, a
// few at a time (core/jobs/workflows.ts).
import type { NodeDefinition } from '../../engine/types.ts';
import { stringifyJson } from '../../lib/json.ts';
import type { JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { jsonStream } from '../http/json-stream.ts';
import { isTerminal, type JobStatus } from '../jobs/state-machine.ts';
import { findOwnJob } from '../jobs/view.ts';
import { pagesOfWorkflows } from '../jobs/workflows.ts';
import { cloudAccount } from './auth.ts';
import { historyEntry } from './entries.ts';
import { intParam } from './params.ts';
import { FINISHED_STATUSES } from './status.ts';
import { jobFiles } from './temp-files.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** `{prompt_id: entry, ...}` of these jobs, in their order, one entry per piece. */
async function* entries(ctx: ServiceContext, jobs: JobSummary[], defs: Record<string, NodeDefinition>): AsyncGenerator<string> {
  yield '{';
  let comma = '';
  for await (const page of pagesOfWorkflows(ctx.metadata, jobs)) {
    const outputs = await Promise.all(page.map(([j]) => jobFiles(ctx, j)));
    for (const [i, [job, workflow]] of page.entries()) {
      yield `${comma}${JSON.stringify(job.id)}:${stringifyJson(historyEntry(job, workflow, outputs[i], defs))}`;
      comma = ',';
    }
  }
  yield '}';
}

async function answer(ctx: ServiceContext, jobs: JobSummary[]): Promise<Response> {
  // Before the status goes out, so a failure here is still an error answer.
  const defs = await ctx.engine.nodeDefinitions();
  return jsonStream(entries(ctx, jobs, defs), { headers: NO_STORE }, ctx.logger);
}

export async function getHistory(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const url = new URL(request.url);
  // A page is at most 1000 entries; more asked for (clients ask a large number meaning "all") gets 1000.
  const limit = intParam(url, 'max_items', { min: 1, max: 1000, fallback: 100, clampMax: true });
  const offset = intParam(url, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  const jobs = await ctx.metadata.listAccountJobs(account.id, {
    statuses: FINISHED_STATUSES,
    expires_after: ctx.now(),
    in_history: true,
    limit,
    offset,
  });
  return answer(ctx, jobs);
}

export async function getHistoryItem(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  let job: JobSummary;
  try {
    job = await findOwnJob(ctx, account, id);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') return Response.json({}, { headers: NO_STORE });
    throw err;
  }
  if (!isTerminal(job.status as JobStatus) || job.history_hidden_at !== null) return Response.json({}, { headers: NO_STORE });
  return answer(ctx, [job]);
}
