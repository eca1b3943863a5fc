// The caller's queue: GET /queue (`{queue_running, queue_pending}`, oldest
// first, items `[number, prompt_id, workflow, output_node_ids,
// {create_time}]`), POST /queue (`delete`: cancel those jobs, pending or
// running; `clear`: cancel every pending one -> `{deleted, cleared}`, where
// `deleted` lists every job this call canceled) and POST /interrupt (the
// caller's running jobs, or only `prompt_id` if it is running -> `{}`).
// Cancels go through the one state machine (core/jobs/read.ts requestCancel);
// ids of other accounts, unknown or finished jobs are skipped, not errors.
// Each queue list shows at most 1000 items; GET /prompt counts them all.
// Every item carries its workflow, which may weigh megabytes: the lists are
// read without them, and the body is written as the workflows are read, a
// few at a time (core/jobs/workflows.ts), so the answer never holds the queue.
import * as v from 'valibot';
import type { NodeDefinition } from '../../engine/types.ts';
import { stringifyJson } from '../../lib/json.ts';
import { isUuid } from '../../lib/uuid.ts';
import type { JobSummary } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { jsonStream } from '../http/json-stream.ts';
import { requestCancel } from '../jobs/read.ts';
import { pagesOfWorkflows } from '../jobs/workflows.ts';
import { validate } from '../schemas.ts';
import { cloudAccount } from './auth.ts';
import { queueItem } from './entries.ts';
import { ManageBody } from './manage-body.ts';
import { readObject } from './read-object.ts';
import { RUNNING_STATUSES } from './status.ts';

const MAX_LISTED = 1000;
const ACTIVE = new Set(['queued', 'running']);
const NO_STORE = { 'Cache-Control': 'no-store' };

export async function getQueue(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const list = (statuses: string[]) => ctx.metadata.listAccountJobs(account.id, { statuses, order: 'asc', limit: MAX_LISTED });
  const [running, pending, defs] = await Promise.all([list(RUNNING_STATUSES), list(['queued']), ctx.engine.nodeDefinitions()]);
  return jsonStream(queueBody(ctx, running, pending, defs), { headers: NO_STORE }, ctx.logger);
}

/** `{"queue_running":[...],"queue_pending":[...]}`, one item per piece. */
async function* queueBody(
  ctx: ServiceContext,
  running: JobSummary[],
  pending: JobSummary[],
  defs: Record<string, NodeDefinition>,
): AsyncGenerator<string> {
  yield '{"queue_running":[';
  yield* queueItems(ctx, running, defs);
  yield '],"queue_pending":[';
  yield* queueItems(ctx, pending, defs);
  yield ']}';
}

async function* queueItems(ctx: ServiceContext, jobs: JobSummary[], defs: Record<string, NodeDefinition>): AsyncGenerator<string> {
  let comma = '';
  for await (const page of pagesOfWorkflows(ctx.metadata, jobs)) {
    for (const [job, workflow] of page) {
      yield comma + stringifyJson(queueItem(job, workflow, defs));
      comma = ',';
    }
  }
}

/** Cancels the job if it is pending or running; true when this call moved it. */
async function cancel(ctx: ServiceContext, job: JobSummary): Promise<boolean> {
  if (!ACTIVE.has(job.status)) return false;
  const after = await requestCancel(ctx, job);
  return after.status === 'canceled' || after.status === 'canceling';
}

export async function postQueue(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const body = validate(ManageBody, await readObject(request));
  const deleted: string[] = [];
  for (const id of new Set(body.delete ?? [])) {
    const job = isUuid(id) ? await ctx.metadata.getJob(account.id, id.toLowerCase()) : null;
    if (job && (await cancel(ctx, job))) deleted.push(job.id);
  }
  if (body.clear) {
    // Batches until none is left; a batch that cancels nothing (all raced away) ends it.
    for (;;) {
      const batch = await ctx.metadata.listQueuedJobs(account.id, 200);
      let moved = 0;
      for (const job of batch) {
        if (await cancel(ctx, job)) {
          moved++;
          if (!deleted.includes(job.id)) deleted.push(job.id);
        }
      }
      if (batch.length === 0 || moved === 0) break;
    }
  }
  return Response.json({ deleted, cleared: body.clear === true });
}

export const InterruptBody = v.object({ prompt_id: v.nullish(v.string('must be a string')) });

export async function postInterrupt(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const { prompt_id: id } = validate(InterruptBody, await readObject(request));
  let running: JobSummary[];
  if (id != null) {
    // Only that job, and only if it is running: a pending one stays (cancel it through POST /queue).
    const job = isUuid(id) ? await ctx.metadata.getJob(account.id, id.toLowerCase()) : null;
    running = job?.status === 'running' ? [job] : [];
  } else {
    running = await ctx.metadata.listAccountJobs(account.id, { statuses: ['running'], order: 'asc', limit: MAX_LISTED });
  }
  for (const job of running) await cancel(ctx, job);
  return Response.json({});
}
