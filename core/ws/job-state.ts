// What the `/ws` translator keeps about one running job, and the bodies of the
// messages built from it alone: progress_state (every node that is not
// pending), execution_error and execution_interrupted, in the reference's
// fields. Pure.

import { dict } from '../../lib/dict.ts';
import type { AssetRecord } from '../../storage/types.ts';
import { exceptionFields } from '../cloud/exception-fields.ts';

export type NodeState = 'pending' | 'running' | 'finished';

export interface JobState {
  /** Ran (or is running) here: a cancel then interrupts it. */
  started: boolean;
  cachedSent: boolean;
  current: { node: string; class_type: string } | null;
  /** Nodes done, cached ones included, in order (the reference's `executed`). */
  executed: Set<string>;
  nodes: Map<string, { value: number; max: number; state: NodeState }>;
  /** Committed outputs not yet named in an `executed` message. */
  outputs: AssetRecord[];
}

export const newJobState = (): JobState => ({
  started: false,
  cachedSent: false,
  current: null,
  executed: new Set(),
  nodes: new Map(),
  outputs: [],
});

/** `progress_state` data; no subgraphs here, so every node is its own display and real node. */
export function progressStateData(prompt_id: string, s: JobState): Record<string, unknown> {
  const nodes = dict<unknown>();
  for (const [id, n] of s.nodes) {
    if (n.state === 'pending') continue;
    nodes[id] = {
      value: n.value,
      max: n.max,
      state: n.state,
      node_id: id,
      prompt_id,
      display_node_id: id,
      parent_node_id: null,
      real_node_id: id,
    };
  }
  return { prompt_id, nodes };
}

/** `execution_error` data from the job's JobError record (null/absent fields fall back to where the job was). */
export function executionErrorData(
  prompt_id: string,
  s: JobState | undefined,
  error: Record<string, unknown> | null | undefined,
  timestamp: number,
): Record<string, unknown> {
  const err = error ?? {};
  return {
    prompt_id,
    node_id: (err.node_id as string | null | undefined) ?? s?.current?.node ?? null,
    node_type: (err.class_type as string | null | undefined) ?? s?.current?.class_type ?? null,
    executed: [...(s?.executed ?? [])],
    ...exceptionFields(err),
    // The reference's inputs of the failing node (not kept here) and the ids of nodes with outputs (a list there).
    current_inputs: {},
    current_outputs: [],
    timestamp,
  };
}

/** `execution_interrupted` data: where the job was when it was canceled. */
export function interruptedData(prompt_id: string, s: JobState | undefined, timestamp: number): Record<string, unknown> {
  return {
    prompt_id,
    node_id: s?.current?.node ?? null,
    node_type: s?.current?.class_type ?? null,
    executed: [...(s?.executed ?? [])],
    timestamp,
  };
}
