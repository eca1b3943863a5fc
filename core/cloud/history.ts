// GET /history (`max_items`, `offset`) and GET /history/{prompt_id}: the
// caller's finished jobs, newest first, as the reference engine's
// `{prompt_id: {prompt, outputs, status, meta}}` map (outputs as
// `{filename, subfolder, type}` references /view serves). A job not finished
// yet, an unknown id or another account's job give `{}`, as the reference
// answers for an id it has no history of. `max_items` defaults to 100 and is
// at most 1000 (the reference's default is everything it keeps).
import type { JobRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { isTerminal, type JobStatus } from '../jobs/state-machine.ts';
import { findOwnJob } from '../jobs/view.ts';
import { cloudAccount } from './auth.ts';
import { historyEntry } from './entries.ts';
import { intParam } from './params.ts';
import { FINISHED_STATUSES } from './status.ts';

const NO_STORE = { 'Cache-Control': 'no-store' };

async function entries(ctx: ServiceContext, jobs: JobRecord[]): Promise<Record<string, unknown>> {
  const [defs, outputs] = await Promise.all([
    ctx.engine.nodeDefinitions(),
    Promise.all(jobs.map((j) => ctx.metadata.listJobAssets(j.account_id, j.id))),
  ]);
  const out: Record<string, unknown> = {};
  for (const [i, job] of jobs.entries()) out[job.id] = historyEntry(job, outputs[i], defs);
  return out;
}

export async function getHistory(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const url = new URL(request.url);
  const limit = intParam(url, 'max_items', { min: 1, max: 1000, fallback: 100 });
  const offset = intParam(url, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  const jobs = await ctx.metadata.listAccountJobs(account.id, {
    statuses: FINISHED_STATUSES,
    expires_after: ctx.now(),
    limit,
    offset,
  });
  return Response.json(await entries(ctx, jobs), { headers: NO_STORE });
}

export async function getHistoryItem(request: Request, ctx: ServiceContext, id: string): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  let job: JobRecord;
  try {
    job = await findOwnJob(ctx, account, id);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') return Response.json({}, { headers: NO_STORE });
    throw err;
  }
  if (!isTerminal(job.status as JobStatus)) return Response.json({}, { headers: NO_STORE });
  return Response.json(await entries(ctx, [job]), { headers: NO_STORE });
}
