// The job's memory budget at run time (maxJobMemoryBytes). Every result of a
// job stays alive until the job ends (later nodes may read it), so before a
// node runs, the bytes its results already hold plus what the node's
// estimate says it will allocate must fit the budget; otherwise the job
// fails with OOMError and nothing is allocated. A node that cannot say ahead
// (LoadImage) is handed what is left, to check its own sizes against.
import { ExecutionError } from '../types.ts';
import type { MemoryEstimate, NodeResult } from './define-node.ts';
import type { PlannedNode } from './plan.ts';

export const DEFAULT_MAX_JOB_MEMORY_BYTES = 1024 ** 3;

/** A node would take more memory than the job has left; thrown before it allocates. */
export class OOMError extends Error {
  override name = 'OOMError';
  readonly exception_type = 'OOMError';
}

/** "3 GiB (3221225472 bytes)": readable, and exact for whoever compares numbers. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${n} bytes`;
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]} (${n} bytes)`;
}

/** A node's estimate; a failing estimator says nothing (run() reports the bad input itself). */
export function estimateOf(memory: ((inputs: Record<string, unknown>) => MemoryEstimate | null) | undefined, inputs: Record<string, unknown>) {
  try {
    return memory?.(inputs) ?? null;
  } catch {
    return null;
  }
}

/** What a job's results hold: typed arrays (an IMAGE's or MASK's data), each buffer counted once. */
interface Held {
  bytes: number;
  buffers: Set<ArrayBufferLike>;
  /** Entries of the results map counted so far. */
  entries: number;
  /** The key of the node admitted last: its result is the one entry the map gains before the next admission. */
  pending: string | null;
}

function count(held: Held, result: NodeResult): void {
  const add = (value: unknown) => {
    const data = ArrayBuffer.isView(value) ? value : (value as { data?: unknown } | null)?.data;
    if (!ArrayBuffer.isView(data) || held.buffers.has(data.buffer)) return;
    held.buffers.add(data.buffer);
    held.bytes += data.buffer.byteLength;
  };
  for (const value of result.outputs) {
    if (Array.isArray(value)) value.forEach(add);
    else add(value);
  }
}

// Per job (its results map), so a long chain is not recounted at every node.
const heldByJob = new WeakMap<Map<string, NodeResult>, Held>();

/** Bytes the job's results hold now; counts only what was added since the last call, unless the map changed otherwise. */
function heldBytes(results: Map<string, NodeResult>, next: string): number {
  let held = heldByJob.get(results);
  const added = held?.pending != null && results.has(held.pending) ? 1 : 0;
  if (!held || results.size !== held.entries + added) {
    held = { bytes: 0, buffers: new Set(), entries: results.size, pending: null };
    for (const result of results.values()) count(held, result);
  } else if (added) {
    count(held, results.get(held.pending!)!);
    held.entries++;
  }
  held.pending = next;
  heldByJob.set(results, held);
  return held.bytes;
}

/** Why a node does not fit, in the words both the refusal and the OOMError use. */
export function overBudgetMessage(estimate: MemoryEstimate, held: number, maxBytes: number): string {
  const need = estimate.bytes + (estimate.scratch ?? 0);
  const earlier = held > 0 ? `, of which earlier results hold ${formatBytes(held)}` : '';
  return `Needs ${formatBytes(need)} of memory; the job's memory budget is ${formatBytes(maxBytes)}${earlier}`;
}

/** "Node 4 (ImageScale), input 'width'": where a refusal and an OOMError start. */
export const nodeLabel = (id: string, classType: string, input?: string) => `Node ${id} (${classType})${input ? `, input '${input}'` : ''}`;

/**
 * Admits a node about to run with these inputs: throws an OOMError
 * execution error (naming the node, its class, the bytes and the budget)
 * when its estimate does not fit beside what the job's results hold;
 * returns the bytes the node may still allocate on its own.
 */
export function admitNode(p: PlannedNode, inputs: Record<string, unknown>, results: Map<string, NodeResult>, maxBytes: number): number {
  const held = heldBytes(results, p.cache_key);
  const estimate = estimateOf(p.node.memory, inputs);
  const need = estimate ? estimate.bytes + (estimate.scratch ?? 0) : 0;
  if (estimate && held + need > maxBytes) {
    const message = `${nodeLabel(p.id, p.class_type, estimate.input)}: ${overBudgetMessage(estimate, held, maxBytes)}`;
    throw new ExecutionError(message, 'OOMError', p.id, p.class_type);
  }
  return Math.max(0, maxBytes - held - need);
}
