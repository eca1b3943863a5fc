// POST /api/v2/jobs: the v2 body read and checked (its envelope, reserved
// fields, metadata, the JobSubmission schema), submitted through the use case every
// surface shares (submit-workflow.ts), answered 201 with the Job. Its
// refusals are rendered by the v2 surface (core/v2/errors.ts).
import { isRecord } from '../../lib/is-record.ts';
import { stringifyJson } from '../../lib/json.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, invalid } from '../errors.ts';
import { mountPrefix } from '../http/links.ts';
import { readJson } from '../http/read-json.ts';
import { jsonResponse } from '../http/request-options.ts';
import { EXTRA_DATA_KEYS, JobSubmission, MAX_METADATA_BYTES, validate } from '../schemas.ts';
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

/** Deeper than any label needs; checked before anything serialises it. */
const MAX_METADATA_DEPTH = 16;

/** `metadata`: absent, null, or a JSON object small enough to store with every job. */
function checkMetadata(metadata: unknown): void {
  if (metadata === undefined || metadata === null) return;
  if (!isRecord(metadata)) throw invalid('metadata: must be a JSON object', 'metadata', 'must be an object');
  if (depthExceeds(metadata, MAX_METADATA_DEPTH)) {
    throw invalid(`metadata: nested deeper than ${MAX_METADATA_DEPTH} levels`, 'metadata', 'too deeply nested');
  }
  const bytes = new TextEncoder().encode(stringifyJson(metadata)).length;
  if (bytes > MAX_METADATA_BYTES) {
    throw invalid(`metadata: ${bytes} bytes as JSON, more than the ${MAX_METADATA_BYTES} allowed`, 'metadata', 'too large', {
      limit_bytes: MAX_METADATA_BYTES,
    });
  }
}

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
  checkMetadata(body.metadata);
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
  const { extra_data, priority } = validate(JobSubmission, body);
  // The workflow and metadata as sent: valibot's record leaves out keys such as `__proto__` (its guard
  // against prototype pollution), and their keys are data. checkEnvelope and the schema have checked their shape.
  const { workflow, metadata } = body as { workflow: Record<string, unknown>; metadata?: Record<string, unknown> | null };
  const { job, queuePosition } = await submitWorkflow(ctx, request, account, {
    workflow,
    extra_data,
    priority: priority ?? 0,
    metadata: metadata ?? null,
  });
  // Counted at admission, which saves counting the queue twice per submission.
  const view = await jobView(ctx, request, job, { outputs: [], queuePosition });
  return jsonResponse(request, view, { status: 201, headers: { Location: `${mountPrefix(ctx, request)}${jobPath(job.id)}` } });
}
