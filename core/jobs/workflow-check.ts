// Submission checks on a workflow that need no storage: a node's class, the
// UI-export guard, typed asset references (found, and replaced by the asset id the engine's
// loaders take), the engine's validation turned into the v2 `node_errors`
// shape, and which nodes a run will touch (for progress).
import type { ValidationIssue, ValidationResult, Workflow } from '../../engine/types.ts';
import { dict } from '../../lib/dict.ts';
import { isRecord } from '../../lib/is-record.ts';
import { isUuid } from '../../lib/uuid.ts';

/** A node's class_type, when the node is an object that names one. */
export function classTypeOf(node: unknown): string | undefined {
  const cls = (node as { class_type?: unknown } | null | undefined)?.class_type;
  return typeof cls === 'string' ? cls : undefined;
}

/** The editor's save format (`nodes` + `links` arrays) rather than the API format. */
export function isUiExport(workflow: Record<string, unknown>): boolean {
  return Array.isArray(workflow.nodes) && Array.isArray(workflow.links);
}

export const ASSET_TYPE = 'core/ASSET';

export interface AssetRef {
  node_id: string;
  field: string;
  /** The referenced asset id; null when the reference is malformed. */
  id: string | null;
}

function refId(value: Record<string, unknown>): string | null {
  const info = value.info;
  if (!isRecord(info) || typeof info.id !== 'string' || !isUuid(info.id)) return null;
  return info.id.toLowerCase();
}

/** Every `{__type: "core/ASSET", info: {id}}` input value, node by node. */
export function findAssetRefs(workflow: Record<string, unknown>): AssetRef[] {
  const refs: AssetRef[] = [];
  for (const [nodeId, node] of Object.entries(workflow)) {
    if (!isRecord(node) || !isRecord(node.inputs)) continue;
    for (const [field, value] of Object.entries(node.inputs)) {
      if (isRecord(value) && value.__type === ASSET_TYPE) refs.push({ node_id: nodeId, field, id: refId(value) });
    }
  }
  return refs;
}

/**
 * A copy in which each asset reference is replaced by its asset id: the
 * `info.id` is authoritative, `hash` and `file_path` are only hints. A
 * malformed reference becomes '' (submission refuses those before running).
 */
export function resolveAssetRefs(workflow: Record<string, unknown>): Workflow {
  const out = dict<unknown>();
  for (const [nodeId, node] of Object.entries(workflow)) {
    if (!isRecord(node) || !isRecord(node.inputs)) {
      out[nodeId] = node;
      continue;
    }
    const inputs = dict<unknown>();
    for (const [field, value] of Object.entries(node.inputs)) {
      inputs[field] = isRecord(value) && value.__type === ASSET_TYPE ? (refId(value) ?? '') : value;
    }
    out[nodeId] = { ...node, inputs };
  }
  return out as Workflow;
}

export interface NodeErrorEntry {
  field: string | null;
  reason: string;
  message: string;
}

export type V2NodeErrors = Record<string, NodeErrorEntry[]>;

const entryOf = (issue: ValidationIssue): NodeErrorEntry => ({
  field: typeof issue.extra_info.input_name === 'string' ? issue.extra_info.input_name : null,
  reason: issue.type,
  message: issue.details ? `${issue.message}: ${issue.details}` : issue.message,
});

/**
 * The engine's verdict as v2 details, or null when the workflow is accepted.
 * Stricter than the reference's /prompt, which runs the outputs that passed
 * and reports the rest: a v2 job either runs as submitted or is refused.
 */
export function workflowErrors(result: ValidationResult): { message: string; node_errors: V2NodeErrors; reason: string } | null {
  const errors: V2NodeErrors = dict();
  for (const [id, n] of Object.entries(result.node_errors ?? {})) errors[id] = n.errors.map(entryOf);
  if (result.ok && Object.keys(errors).length === 0) return null;
  if (!result.ok) {
    // Whole-prompt errors (a malformed or unknown node) name their node in extra_info.
    const nodeId = result.error.extra_info.node_id;
    if (typeof nodeId === 'string' && !Object.hasOwn(errors, nodeId)) errors[nodeId] = [entryOf(result.error)];
  }
  const [firstId, first] = Object.entries(errors)[0] ?? [];
  const classType = firstId !== undefined ? result.node_errors?.[firstId]?.class_type : undefined;
  const message = first
    ? `Node ${firstId}${classType ? ` (${classType})` : ''}: ${first[0].message}`
    : result.ok
      ? 'The workflow failed validation.'
      : result.error.details
        ? `${result.error.message}: ${result.error.details}`
        : result.error.message;
  return { message, node_errors: errors, reason: result.ok ? 'prompt_outputs_failed_validation' : result.error.type };
}

/** `[node_id, output_index]` pointing at a node of this workflow. */
const isLink = (wf: Workflow, v: unknown): v is [string, number] =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && Number.isInteger(v[1]) && v[0] in wf;

/** How many nodes a run of these outputs visits: the outputs and everything they link to. */
export function countNodesToRun(wf: Workflow, outputs: string[]): number {
  const seen = new Set<string>();
  const stack = [...outputs];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id) || !(id in wf)) continue;
    seen.add(id);
    for (const v of Object.values(wf[id].inputs ?? {})) if (isLink(wf, v)) stack.push(v[0]);
  }
  return seen.size;
}
