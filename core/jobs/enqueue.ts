// What every submission surface shares (POST /api/v2/jobs, the cloud
// surface's POST /prompt): the checks of a workflow that need the engine and
// the caller's assets, the partner-node key, and the admission that ends in a
// durable `queued` row. Each surface reads its own body and answers in its
// own shape; the job is the same job either way.
import type { ValidationResult } from '../../engine/types.ts';
import type { AccountRecord, JobRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, invalid } from '../errors.ts';
import { withIdempotency } from '../idempotency.ts';
import { findAssetRefs, isUiExport, resolveAssetRefs, workflowErrors, type V2NodeErrors } from './workflow-check.ts';

/** Deeper than any real graph; deeper values would only overflow the stack of whoever serialises them. */
export const MAX_WORKFLOW_DEPTH = 64;

/** The nesting depth of a JSON value, walked without recursion, stopping once past `limit`. */
export function depthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * The partner-node key under its one name (the alias is what the public
 * client sends), as the runner hands it to the engine; undefined without one.
 */
export function partnerKey(
  ctx: ServiceContext,
  extra: { api_key_platform_org?: string; api_key_comfy_org?: string } | undefined,
): Record<string, unknown> | undefined {
  if (!extra) return undefined;
  const { api_key_platform_org: key, api_key_comfy_org: alias } = extra;
  if (key !== undefined && alias !== undefined && key !== alias) {
    throw invalid('extra_data: api_key_platform_org and api_key_comfy_org differ; send one', 'extra_data', 'conflicting keys');
  }
  const value = key ?? alias;
  if (value === undefined) return undefined;
  if (!ctx.config.runJobs) {
    // It is never stored, so only the instance that runs the job could hand it on.
    throw invalid(
      'extra_data: this instance only queues jobs (another one runs them), so it cannot forward a partner-node key',
      'extra_data',
      'not forwarded by this instance',
    );
  }
  return { api_key_platform_org: value };
}

/** Why a workflow is refused: the v2 error, plus what the cloud surface needs for the reference's shape. */
export interface WorkflowProblem {
  code: 'workflow_format_ui' | 'invalid_workflow' | 'missing_asset';
  message: string;
  /** The reference's top-level error type (`prompt_no_outputs`, `missing_node_type`, ...). */
  reason: string;
  node_errors: V2NodeErrors;
  /** The engine's verdict, when the engine refused the workflow. */
  validation?: ValidationResult;
}

/** The v2 error of a refused workflow. */
export function problemError(p: WorkflowProblem): ApiError {
  switch (p.code) {
    case 'workflow_format_ui':
      return new ApiError(p.code, p.message);
    case 'missing_asset':
      return new ApiError(p.code, p.message, { node_errors: p.node_errors });
    default:
      return new ApiError(p.code, p.message, { node_errors: p.node_errors, reason: p.reason });
  }
}

/** The workflow's partner nodes (classes that call external services), as [id, class_type]. */
export async function partnerNodes(ctx: ServiceContext, workflow: Record<string, unknown>): Promise<Array<[string, string]>> {
  const defs = await ctx.engine.nodeDefinitions();
  const found: Array<[string, string]> = [];
  for (const [id, node] of Object.entries(workflow)) {
    const cls = typeof node === 'object' && node !== null && typeof (node as { class_type?: unknown }).class_type === 'string' ? (node as { class_type: string }).class_type : undefined;
    if (cls !== undefined && Object.hasOwn(defs, cls) && defs[cls].api_node === true) found.push([id, cls]);
  }
  return found;
}

/** v2's refusal of partner nodes sent without the key: 422 invalid_workflow naming each node. */
export function partnerKeyError(nodes: Array<[id: string, classType: string]>): ApiError {
  const message = `This workflow contains partner nodes that call external services (${nodes.map(([id, cls]) => `${id} (${cls})`).join(', ')}); send your API key as extra_data.api_key_platform_org to run them.`;
  const node_errors: V2NodeErrors = {};
  for (const [id] of nodes) node_errors[id] = [{ field: 'extra_data.api_key_platform_org', reason: 'api_key_required', message: 'A partner node needs extra_data.api_key_platform_org' }];
  return new ApiError('invalid_workflow', message, { node_errors, reason: 'api_key_required' });
}

/** Every typed asset reference must name a live asset of the caller. */
async function assetProblems(ctx: ServiceContext, account: AccountRecord, workflow: Record<string, unknown>): Promise<WorkflowProblem | null> {
  const found = new Map<string, boolean>();
  const errors: V2NodeErrors = {};
  const now = ctx.now();
  for (const ref of findAssetRefs(workflow)) {
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
  if (nodeId === undefined) return null;
  return {
    code: 'missing_asset',
    message: `Node ${nodeId}: input '${entries[0].field}': ${entries[0].message}.`,
    reason: entries[0].reason,
    node_errors: errors,
  };
}

/**
 * Whether the workflow can run as submitted: not an editor export, not
 * empty, accepted by the engine, every asset reference the caller's.
 */
export async function checkWorkflow(
  ctx: ServiceContext,
  account: AccountRecord,
  workflow: Record<string, unknown>,
): Promise<WorkflowProblem | null> {
  if (isUiExport(workflow)) {
    return {
      code: 'workflow_format_ui',
      message: 'This is a workflow saved from the editor (nodes/links). Submit the API format instead (export it with "Export (API)").',
      reason: 'workflow_format_ui',
      node_errors: {},
    };
  }
  if (Object.keys(workflow).length === 0) {
    return { code: 'invalid_workflow', message: 'The workflow has no nodes.', reason: 'prompt_no_outputs', node_errors: {} };
  }
  const validation = await ctx.engine.validate(resolveAssetRefs(workflow));
  const verdict = workflowErrors(validation);
  if (verdict) return { code: 'invalid_workflow', ...verdict, validation };
  return assetProblems(ctx, account, workflow);
}

export interface Enqueue {
  workflow: Record<string, unknown>;
  /** What the runner hands the engine (the partner-node key); never stored. */
  extra?: Record<string, unknown>;
  /** A job id the client chose; it must not be in use (a duplicate makes createJob throw). */
  id?: string;
}

/**
 * Admits and stores a checked workflow as a `queued` job under the request's
 * Idempotency-Key. Resolves to the row and how many jobs were queued ahead of it.
 */
export async function enqueueJob(
  ctx: ServiceContext,
  request: Request,
  account: AccountRecord,
  { workflow, extra, id = crypto.randomUUID() }: Enqueue,
): Promise<{ job: JobRecord; ahead: number }> {
  return withIdempotency(ctx, request, account, async (commitment) => {
    const ahead = await ctx.jobs.scheduler.admit(account.id);
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
        expires_at: now + ctx.config.jobRetentionMs,
      });
    } catch (err) {
      ctx.jobs.extraData.delete(id);
      throw err;
    }
    commitment.committed();
    ctx.jobs.hub.announce(job, 'queued');
    if (ctx.config.runJobs) ctx.jobs.scheduler.kick();
    return { job, ahead };
  });
}
