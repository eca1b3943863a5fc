// POST /api/v2/jobs: synchronous validation (body shape, reserved fields, UI
// exports, the engine's per-node checks, typed asset references), then the
// admission checks (credits, queue depth) and a durable `queued` row.
import type { AccountRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { mountPrefix } from '../context.ts';
import { ApiError, invalid } from '../errors.ts';
import { withIdempotency } from '../idempotency.ts';
import { readJson } from '../read-json.ts';
import { EXTRA_DATA_KEYS, JobSubmission, validate } from '../schemas.ts';
import { jobPath, jobView } from './view.ts';
import { findAssetRefs, isUiExport, resolveAssetRefs, workflowErrors, type V2NodeErrors } from './workflow-check.ts';

/** Reserved for later versions of the contract; refused so clients cannot come to rely on them being ignored. */
const RESERVED = ['webhook_url', 'inputs'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deeper than any real graph; deeper values would only overflow the stack of whoever serialises them. */
export const MAX_WORKFLOW_DEPTH = 64;

/** The nesting depth of a JSON value, walked without recursion, stopping once past `limit`. */
function depthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

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

/** The partner-node key under its one name; the alias is what the public client sends. */
function partnerKey(extra: JobSubmission['extra_data']): Record<string, unknown> | undefined {
  if (!extra) return undefined;
  const { api_key_platform_org: key, api_key_comfy_org: alias } = extra;
  if (key !== undefined && alias !== undefined && key !== alias) {
    throw invalid('extra_data: api_key_platform_org and api_key_comfy_org differ; send one', 'extra_data', 'conflicting keys');
  }
  const value = key ?? alias;
  return value === undefined ? undefined : { api_key_platform_org: value };
}

/** Every typed asset reference must name a live asset of the caller. */
async function checkAssetRefs(ctx: ServiceContext, account: AccountRecord, workflow: Record<string, unknown>): Promise<void> {
  const refs = findAssetRefs(workflow);
  const found = new Map<string, boolean>();
  const errors: V2NodeErrors = {};
  const now = ctx.now();
  for (const ref of refs) {
    let reason: string | null = null;
    if (ref.id === null) reason = 'malformed_asset_reference';
    else {
      if (!found.has(ref.id)) found.set(ref.id, (await ctx.metadata.getAsset(account.id, ref.id, now)) !== null);
      if (!found.get(ref.id)) reason = 'asset_not_found';
    }
    if (reason) {
      const message = reason === 'malformed_asset_reference'
        ? 'a core/ASSET reference needs info.id, an asset UUID'
        : `no asset ${ref.id} is available to this account`;
      (errors[ref.node_id] ??= []).push({ field: ref.field, reason, message });
    }
  }
  const [nodeId, entries] = Object.entries(errors)[0] ?? [];
  if (nodeId !== undefined) {
    throw new ApiError('missing_asset', `Node ${nodeId}: input '${entries[0].field}': ${entries[0].message}.`, { node_errors: errors });
  }
}

export async function submitJob(request: Request, ctx: ServiceContext): Promise<Response> {
  const account = await ctx.auth.authenticate(request);
  const body = await readJson(request, ctx.jobs.maxWorkflowBytes);
  checkEnvelope(body);
  const submission = validate(JobSubmission, body);
  const extra = partnerKey(submission.extra_data);
  if (extra && !ctx.jobs.runsJobs) {
    // It is never stored, so only the instance that runs the job could hand it on.
    throw invalid(
      'extra_data: this instance only queues jobs (another one runs them), so it cannot forward a partner-node key',
      'extra_data',
      'not forwarded by this instance',
    );
  }
  const workflow = submission.workflow;
  if (isUiExport(workflow)) {
    throw new ApiError(
      'workflow_format_ui',
      'This is a workflow saved from the editor (nodes/links). Submit the API format instead (export it with "Export (API)").',
    );
  }
  if (Object.keys(workflow).length === 0) {
    throw new ApiError('invalid_workflow', 'The workflow has no nodes.', { node_errors: {}, reason: 'prompt_no_outputs' });
  }
  const verdict = workflowErrors(await ctx.jobs.engine.validate(resolveAssetRefs(workflow)));
  if (verdict) throw new ApiError('invalid_workflow', verdict.message, { node_errors: verdict.node_errors, reason: verdict.reason });
  await checkAssetRefs(ctx, account, workflow);

  return withIdempotency(ctx, request, account, async (commitment) => {
    const ahead = await ctx.jobs.scheduler.admit(account.id);
    const id = crypto.randomUUID();
    // In place before the row exists: the scheduler may start the job at once.
    if (extra) ctx.jobs.extraData.set(id, extra);
    const now = ctx.now();
    let job;
    try {
      job = await ctx.metadata.createJob({
        id,
        account_id: account.id,
        status: 'queued',
        workflow,
        created_at: now,
        expires_at: now + ctx.jobs.retentionMs,
      });
    } catch (err) {
      ctx.jobs.extraData.delete(id);
      throw err;
    }
    commitment.committed();
    ctx.jobs.hub.announce(job, 'queued');
    if (ctx.jobs.runsJobs) ctx.jobs.scheduler.kick();
    // Counted at admission, which saves counting the queue twice per submission.
    const view = await jobView(ctx, request, job, { outputs: [], queuePosition: ahead });
    return Response.json(view, { status: 201, headers: { Location: `${mountPrefix(ctx)}${jobPath(id)}` } });
  });
}
