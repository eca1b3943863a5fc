// POST /api/v2/jobs: synchronous validation (body shape, reserved fields, UI
// exports, the engine's per-node checks, typed asset references), then the
// admission checks (credits, queue depth) and a durable `queued` row. The
// checks and the admission are shared with the cloud surface (enqueue.ts).
import type { ServiceContext } from '../context.ts';
import { mountPrefix } from '../links.ts';
import { invalid } from '../errors.ts';
import { readJson } from '../read-json.ts';
import { EXTRA_DATA_KEYS, JobSubmission, validate } from '../schemas.ts';
import { checkWorkflow, depthExceeds, enqueueJob, MAX_WORKFLOW_DEPTH, partnerKey, partnerKeyError, partnerNodes, problemError } from './enqueue.ts';
import { jobPath, jobView } from './view.ts';

export { MAX_WORKFLOW_DEPTH } from './enqueue.ts';

/** Reserved for later versions of the contract; refused so clients cannot come to rely on them being ignored. */
const RESERVED = ['webhook_url', 'inputs'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkEnvelope(body: unknown): void {
  if (!isObject(body)) throw invalid('The body must be a JSON object with a "workflow".', '(body)', 'must be an object');
  if (Array.isArray(body.workflow)) {
    throw invalid('workflow: must be an object of nodes keyed by node id, not an array', 'workflow', 'must be an object');
  }
  if (depthExceeds(body.workflow, MAX_WORKFLOW_DEPTH)) {
    throw invalid(`workflow: nested deeper than ${MAX_WORKFLOW_DEPTH} levels`, 'workflow', 'too deeply nested');
  }
  for (const field of RESERVED) {
    if (field in body) throw invalid(`${field}: is reserved and not accepted yet`, field, 'reserved');
  }
  if (isObject(body.extra_data)) {
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
  const submission = validate(JobSubmission, body);
  const extra = partnerKey(ctx, submission.extra_data);
  const workflow = submission.workflow;
  const problem = await checkWorkflow(ctx, account, workflow);
  if (problem) throw problemError(problem);
  const partners = await partnerNodes(ctx, workflow);
  if (partners.length > 0 && !extra?.api_key_platform_org) throw partnerKeyError(partners);

  const { job, ahead } = await enqueueJob(ctx, request, account, { workflow, extra });
  // Counted at admission, which saves counting the queue twice per submission.
  const view = await jobView(ctx, request, job, { outputs: [], queuePosition: ahead });
  return Response.json(view, { status: 201, headers: { Location: `${mountPrefix(ctx, request)}${jobPath(job.id)}` } });
}
