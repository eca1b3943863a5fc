// POST /history (`{"clear": true}` and/or `{"delete": [prompt_id, ...]}`):
// takes the caller's finished jobs out of its history, all of them or the
// ones named, and answers 200 with an empty body, as the reference does.
// Jobs are durable here, so "out of the history" is not "deleted": GET
// /history and /history/{id} no longer show them, while the job, its
// outputs and every other view of it (v2, /api/jobs, /api/job/{id}/status,
// /view) stay until its retention ends. A job still queued or running is not
// in the history yet and is left alone, as the reference leaves it (it shows
// up once it finishes). Ids of other accounts or of no job are skipped.
import { isUuid } from '../../lib/uuid.ts';
import type { ServiceContext } from '../context.ts';
import { validate } from '../schemas.ts';
import { cloudAccount } from './auth.ts';
import { ManageBody } from './manage-body.ts';
import { readObject } from './read-object.ts';
import { FINISHED_STATUSES } from './status.ts';

export async function postHistory(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const body = validate(ManageBody, await readObject(request));
  const now = ctx.now();
  const ids = [...new Set((body.delete ?? []).filter(isUuid).map((id) => id.toLowerCase()))];
  if (ids.length > 0) await ctx.metadata.hideFromHistory(account.id, FINISHED_STATUSES, ids, now);
  if (body.clear) await ctx.metadata.hideFromHistory(account.id, FINISHED_STATUSES, 'all', now);
  return new Response(null, { status: 200 });
}
