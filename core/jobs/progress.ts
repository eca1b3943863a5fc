// Folds a job's engine events into the v2 `Progress` snapshot the job row and
// the SSE stream carry. Each snapshot is complete (one re-syncs a client), and
// `value` never goes backwards even when the engine's view of a node restarts.
import type { EngineEvent } from '../../engine/types.ts';

/** The contract's Progress schema, every field present. */
export interface Progress {
  /** 0..1: each node counts 1, the node in progress counts step/steps of 1. */
  value: number;
  nodes_done: number;
  nodes_total: number;
  current_node: string | null;
  current_node_class: string | null;
  step: number | null;
  steps: number | null;
  /** e.g. "KSampler 21/50", the class alone before any step, null when idle. */
  message: string | null;
}

export interface ProgressTracker {
  /** Applies one event; returns the new snapshot, or null when the event changes nothing. */
  update(event: EngineEvent): Progress | null;
  /** The current snapshot (a fresh object each call). */
  snapshot(): Progress;
  /** Marks every node done (value 1, nothing current): the job succeeded. */
  finish(): Progress;
}

// Four decimals are plenty for a progress bar and keep the JSON short; flooring
// means a job never shows 1 before its last node is really done.
const floor4 = (x: number) => Math.floor(x * 1e4) / 1e4;

export function createProgressTracker(nodesTotal: number): ProgressTracker {
  if (!Number.isInteger(nodesTotal) || nodesTotal < 0) {
    throw new RangeError(`nodesTotal must be a non-negative integer, got ${nodesTotal}`);
  }
  const done = new Set<string>();
  const classes = new Map<string, string>();
  let current: string | null = null;
  let step: number | null = null;
  let steps: number | null = null;
  let value = 0;
  let finished = false;

  const total = () => Math.max(nodesTotal, done.size);

  function markDone(nodeId: string) {
    done.add(nodeId);
    if (current === nodeId) {
      current = null;
      step = steps = null;
    }
  }

  function snapshot(): Progress {
    const t = total();
    const nodesDone = finished ? t : done.size;
    let partial = 0;
    if (current !== null && !done.has(current) && step !== null && steps !== null && steps > 0) {
      partial = Math.min(1, Math.max(0, step / steps));
    }
    const computed = finished ? 1 : t === 0 ? 0 : Math.min(1, (nodesDone + partial) / t);
    value = Math.max(value, floor4(computed));
    const cls = current === null ? null : (classes.get(current) ?? null);
    let message: string | null = null;
    if (current !== null) {
      const label = cls ?? `node ${current}`;
      message = step !== null && steps !== null ? `${label} ${step}/${steps}` : label;
    }
    return {
      value,
      nodes_done: nodesDone,
      nodes_total: t,
      current_node: current,
      current_node_class: cls,
      step,
      steps,
      message,
    };
  }

  function update(event: EngineEvent): Progress | null {
    switch (event.type) {
      case 'cached':
        if (event.node_ids.length === 0) return null;
        for (const id of event.node_ids) markDone(id);
        return snapshot();
      case 'executing':
        classes.set(event.node_id, event.class_type);
        if (current === event.node_id) return snapshot();
        // The engine runs one node at a time, so a new node means the last one ended.
        if (current !== null) markDone(current);
        current = event.node_id;
        step = steps = null;
        return snapshot();
      case 'progress':
        if (current !== event.node_id) {
          if (current !== null) markDone(current);
          current = event.node_id;
        }
        step = event.value;
        steps = event.max;
        return snapshot();
      case 'executed':
        markDone(event.node_id);
        return snapshot();
      default:
        // execution_start, preview, text and notification carry nothing progress shows.
        return null;
    }
  }

  function finish(): Progress {
    finished = true;
    current = null;
    step = steps = null;
    return snapshot();
  }

  return { update, snapshot, finish };
}
