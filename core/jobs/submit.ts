// POST /api/v2/jobs: the v2 body read and checked (its envelope, reserved
// fields, the JobSubmission schema), submitted through the use case every
// surface shares (submit-workflow.ts), answered 201 with the Job. Its
// refusals are rendered by the v2 surface (core/v2/errors.ts).
import { isRecord } from '../../lib/is-record.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, invalid } from '../errors.ts';
import { mountPrefix } from '../http/links.ts';
import { readJson } from '../http/read-json.ts';
import { EXTRA_DATA_KEYS, JobSubmission, validate } from '../schemas.ts';
import { submitWorkflow } from './submit-workflow.ts';
import { jobPath, jobView } from './view.ts';
import { depthExceeds, MAX_WORKFLOW_DEPTH } from './workflow-depth.ts';

/** Reserved for later versions of the contract; refused so clients cannot come to rely on them being ignored. */
const RESERVED = ['webhook_url', 'inputs'];

/**
 * A body that carries no runnable workflow. The contract's 422 codes for this
 * operation are invalid_workflow, workflow_format_ui, missing_asset and
 * idempotency_key_reuse, so these are invalid_workflow, with the field named
 * as invalid_request would name it.
 */
const noWorkflow = (message: string, field: string, reason: string) => new ApiError('invalid_workflow', message, { field, reason });

function checkEnvelope(body: unknown): void {
  if (!isRecord(body)) throw noWorkflow('The body must be a JSON object with a "workflow".', '(body)', 'must be an object');
  if (!isRecord(body.workflow)) {
    const reason = body.workflow === undefined ? 'is required' : 'must be an object';
    throw noWorkflow(`workflow: ${reason}: the API-format graph, an object of nodes keyed by node id`, 'workflow', reason);
  }
  if (depthExceeds(body.workflow, MAX_WORKFLOW_DEPTH)) {
    throw noWorkflow(`workflow: nested deeper than ${MAX_WORKFLOW_DEPTH} levels`, 'workflow', 'too deeply nested');
  }
  for (const field of RESERVED) {
    if (field in body) throw noWorkflow(`${field}: is reserved and not accepted yet`, field, 'reserved');
  }
  if (isRecord(body.extra_data)) {
    for (const key of Object.keys(body.extra_data)) {
      if (!(EXTRA_DATA_KEYS as readonly string[]).includes(key)) {
        throw invalid(`extra_data.${key}: is not accepted; extra_data takes only ${EXTRA_DATA_KEYS.join(', ')}`, `extra_data.${key}`, 'unknown key');
      }
    }
  }
}

export async function submitJob(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const body = await readJson(request, ctx.config.maxWorkflowBytes);
  checkEnvelope(body);
  const { extra_data } = validate(JobSubmission, body);
  // The workflow as sent: valibot's record leaves out keys such as `__proto__` (its guard against
  // prototype pollution), and node ids are data. checkEnvelope and the schema have checked its shape.
  const workflow = (body as { workflow: Record<string, unknown> }).workflow;
  const { job, queuePosition } = await submitWorkflow(ctx, request, account, { workflow, extra_data });
  // Counted at admission, which saves counting the queue twice per submission.
  const view = await jobView(ctx, request, job, { outputs: [], queuePosition });
  return Response.json(view, { status: 201, headers: { Location: `${mountPrefix(ctx, request)}${jobPath(job.id)}` } });
}
