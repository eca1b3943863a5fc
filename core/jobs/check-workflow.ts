// The checks of a submitted workflow that need the engine and the caller's
// assets (the storage-free ones are in workflow-check.ts): the first problem
// found, in terms every submission surface can render its own way.
import type { ValidationResult } from '../../engine/types.ts';
import { dict } from '../../lib/dict.ts';
import type { AccountRecord } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { findAssetRefs, isUiExport, resolveAssetRefs, type V2NodeErrors, workflowErrors } from './workflow-check.ts';

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

/** Every typed asset reference must name a live asset of the caller. */
async function assetProblems(ctx: ServiceContext, account: AccountRecord, workflow: Record<string, unknown>): Promise<WorkflowProblem | null> {
  const found = new Map<string, boolean>();
  const errors: V2NodeErrors = dict();
  const now = ctx.now();
  for (const ref of findAssetRefs(workflow)) {
    let reason: string | null = null;
    if (ref.id === null) reason = 'malformed_asset_reference';
    else {
      if (!found.has(ref.id)) found.set(ref.id, (await ctx.metadata.getAsset(account.id, ref.id, now)) !== null);
      if (!found.get(ref.id)) reason = 'asset_not_found';
    }
    if (reason) {
      const message =
        reason === 'malformed_asset_reference'
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
export async function checkWorkflow(ctx: ServiceContext, account: AccountRecord, workflow: Record<string, unknown>): Promise<WorkflowProblem | null> {
  if (isUiExport(workflow)) {
    return {
      code: 'workflow_format_ui',
      message: 'This is a workflow saved from the editor (nodes/links). Submit the API format instead (export it with "Export (API)").',
      reason: 'workflow_format_ui',
      node_errors: {},
    };
  }
  const nodes = Object.keys(workflow).length;
  if (nodes === 0) {
    return { code: 'invalid_workflow', message: 'The workflow has no nodes.', reason: 'prompt_no_outputs', node_errors: {} };
  }
  if (nodes > ctx.config.maxWorkflowNodes) {
    const message = `The workflow has ${nodes} nodes; this service takes at most ${ctx.config.maxWorkflowNodes} per workflow.`;
    return { code: 'invalid_workflow', message, reason: 'too_many_nodes', node_errors: {} };
  }
  const validation = await ctx.engine.validate(resolveAssetRefs(workflow));
  const verdict = workflowErrors(validation);
  if (verdict) return { code: 'invalid_workflow', ...verdict, validation };
  return assetProblems(ctx, account, workflow);
}
