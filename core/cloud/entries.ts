// A job row in the reference engine's terms, shared by /queue, /history and
// /jobs: its output nodes, its queue item, its history status (with the
// messages a client would have seen on /ws, rebuilt from the row) and its
// per-node meta. `number` is always the job's submission sequence number.
import type { NodeDefinition } from '../../engine/types.ts';
import { dict } from '../../lib/dict.ts';
import type { AssetRecord, JobSummary } from '../../storage/types.ts';
import { classTypeOf } from '../jobs/workflow-check.ts';
import { exceptionFields } from './exception-fields.ts';
import { outputsByNode } from './file-names.ts';
import type { JobFiles } from './temp-files.ts';

type Defs = Record<string, NodeDefinition>;

/** Node ids of the workflow whose class is an output node (what a run executes toward). */
export function outputNodeIds(workflow: Record<string, unknown>, defs: Defs): string[] {
  return Object.entries(workflow)
    .filter(([, node]) => {
      const cls = classTypeOf(node);
      return cls !== undefined && Object.hasOwn(defs, cls) && defs[cls].output_node;
    })
    .map(([id]) => id);
}

/** `[number, prompt_id, workflow, output_node_ids, {create_time}]`, as the cloud contract's QueueItem. */
export function queueItem(
  job: JobSummary,
  workflow: Record<string, unknown>,
  defs: Defs,
): [number, string, Record<string, unknown>, string[], { create_time: number }] {
  return [job.seq, job.id, workflow, outputNodeIds(workflow, defs), { create_time: job.created_at }];
}

/** The failure of a failed job as the reference's execution_error fields. */
export function executionError(job: JobSummary) {
  const err = job.error ?? {};
  return {
    node_id: typeof err.node_id === 'string' ? err.node_id : null,
    node_type: typeof err.class_type === 'string' ? err.class_type : null,
    ...exceptionFields(err),
  };
}

/**
 * `{status_str, completed, messages}` of a finished job, as history shows it:
 * in the reference's order, execution_start, execution_cached (right after
 * it, with the nodes served from cache, `[]` when none or when the engine
 * never said), then how the run ended.
 */
export function historyStatus(job: JobSummary) {
  const messages: Array<[string, Record<string, unknown>]> = [];
  const prompt_id = job.id;
  if (job.started_at !== null) {
    messages.push(['execution_start', { prompt_id, timestamp: job.started_at }]);
    // Its time is not kept: the reference sends it a moment after the start.
    messages.push(['execution_cached', { nodes: [...(job.cached_nodes ?? [])], prompt_id, timestamp: job.started_at }]);
  }
  const timestamp = job.completed_at ?? job.started_at ?? job.created_at;
  if (job.status === 'succeeded') messages.push(['execution_success', { prompt_id, timestamp }]);
  else if (job.status === 'failed') {
    const e = executionError(job);
    messages.push(['execution_error', { prompt_id, ...e, executed: [], current_inputs: {}, current_outputs: [], timestamp }]);
  } else if (job.status === 'canceled' && job.started_at !== null) {
    messages.push(['execution_interrupted', { prompt_id, node_id: null, node_type: null, executed: [], timestamp }]);
  }
  return { status_str: job.status === 'succeeded' ? 'success' : 'error', completed: job.status === 'succeeded', messages };
}

/** Per node with outputs or temporary files, the reference's display metadata (no subgraphs here: every id is its own). */
export function nodeMeta(assets: AssetRecord[], temps: AssetRecord[] = []): Record<string, Record<string, unknown>> {
  const meta = dict<Record<string, unknown>>();
  for (const a of [...assets, ...temps]) {
    const id = a.node_id ?? '';
    meta[id] ??= { node_id: id, display_node: id, parent_node: null, real_node_id: id };
  }
  return meta;
}

/**
 * A finished job's history entry: the reference's 5-tuple prompt, outputs
 * (with the temporary files still kept, core/cloud/temp-files.ts), status and meta.
 */
export function historyEntry(job: JobSummary, workflow: Record<string, unknown>, { outputs: assets, temps }: JobFiles, defs: Defs) {
  return {
    prompt: [job.seq, job.id, workflow, {}, outputNodeIds(workflow, defs)],
    outputs: outputsByNode(assets, temps),
    status: historyStatus(job),
    meta: nodeMeta(assets, temps),
  };
}
