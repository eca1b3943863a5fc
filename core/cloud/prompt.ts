// POST /prompt: the cloud surface's submission. The same job as POST
// /api/v2/jobs (the shared use case, core/jobs/submit-workflow.ts; the
// prompt_id is the job id), answered in the reference's shape:
// 200 `{prompt_id, number, node_errors: {}}` where `number` is the job's
// submission sequence number (the reference's monotonic queue counter; the
// same number GET /queue and /history show). `number` and `front` are
// accepted and ignored (the scheduler's fair queue decides), `client_id` too.
// GET /prompt: `{exec_info: {queue_remaining}}`, the caller's queued and running jobs.
import * as v from 'valibot';
import { isRecord } from '../../lib/is-record.ts';
import { isLowercaseUuid } from '../../lib/uuid.ts';
import type { ServiceContext } from '../context.ts';
import { readJson } from '../http/read-json.ts';
import { jsonResponse } from '../http/request-options.ts';
import { submitWorkflow } from '../jobs/submit-workflow.ts';
import { depthExceeds, MAX_WORKFLOW_DEPTH } from '../jobs/workflow-depth.ts';
import { validate } from '../schemas.ts';
import { cloudAccount, requireActiveSubscription } from './auth.ts';
import { promptErrorResponse, refusal } from './prompt-errors.ts';
import { RUNNING_STATUSES } from './status.ts';

const apiKey = v.pipe(v.string('must be a string'), v.maxLength(4096, 'must be at most 4096 characters'));

/** The fields besides `prompt`; unknown ones are ignored, as the reference ignores them. */
export const PromptFields = v.object({
  // Other keys (extra_pnginfo, ...) are dropped: only the partner-node key is used, and never stored.
  extra_data: v.nullish(v.looseObject({ api_key_platform_org: v.optional(apiKey), api_key_comfy_org: v.optional(apiKey) }, 'must be an object')),
  client_id: v.nullish(v.pipe(v.string('must be a string'), v.maxLength(256, 'must be at most 256 characters'))),
  number: v.nullish(v.pipe(v.number('must be a number'), v.finite('must be a number'))),
  front: v.nullish(v.boolean('must be a boolean')),
  prompt_id: v.nullish(v.string('must be a string')),
  partial_execution_targets: v.nullish(v.array(v.string('must be node ids'), 'must be an array of node ids')),
});

function readFields(body: unknown) {
  if (!isRecord(body)) throw refusal('invalid_request', 'invalid_request', 'The body must be a JSON object with a "prompt".');
  if (body.prompt === undefined || body.prompt === null) throw refusal('invalid_request', 'no_prompt', 'No prompt provided', 'No prompt provided');
  const prompt = body.prompt;
  if (!isRecord(prompt)) {
    throw refusal('invalid_request', 'invalid_prompt', 'prompt: must be an object of nodes keyed by node id (the API format)');
  }
  if (depthExceeds(prompt, MAX_WORKFLOW_DEPTH)) {
    throw refusal('invalid_request', 'invalid_prompt', `prompt: nested deeper than ${MAX_WORKFLOW_DEPTH} levels`);
  }
  if (Array.isArray(body.extra_data)) throw refusal('invalid_request', 'invalid_request', 'extra_data: must be an object');
  const fields = validate(PromptFields, body);
  if (fields.prompt_id != null && !isLowercaseUuid(fields.prompt_id)) {
    throw refusal('invalid_request', 'invalid_prompt_id', 'prompt_id: must be a lowercase UUID', fields.prompt_id);
  }
  if (fields.partial_execution_targets?.length) {
    throw refusal('invalid_request', 'invalid_request', 'partial_execution_targets: is not supported; a job runs all of its output nodes');
  }
  return { ...fields, prompt };
}

async function submitPrompt(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  await requireActiveSubscription(ctx, account);
  const fields = readFields(await readJson(request, ctx.config.maxWorkflowBytes, { anyContentType: true }));
  const { job } = await submitWorkflow(ctx, request, account, {
    workflow: fields.prompt,
    extra_data: fields.extra_data ?? undefined,
    id: fields.prompt_id ?? undefined,
  });
  return jsonResponse(request, { prompt_id: job.id, number: job.seq, node_errors: {} }, {});
}

export async function postPrompt(request: Request, ctx: ServiceContext): Promise<Response> {
  try {
    return await submitPrompt(request, ctx);
  } catch (err) {
    return promptErrorResponse(err, ctx, request);
  }
}

export async function getPrompt(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await cloudAccount(request, ctx);
  const remaining = await ctx.metadata.countJobs(['queued', ...RUNNING_STATUSES], account.id);
  return Response.json({ exec_info: { queue_remaining: remaining } }, { headers: { 'Cache-Control': 'no-store' } });
}
