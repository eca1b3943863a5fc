// Runs one planned node: builds its NodeRunContext on top of the job's
// ExecutionContext, and turns what a node throws into the reference's
// execution_error terms (or lets a cancel through as the abort it is).
import { type ExecutionContext, ExecutionError } from '../types.ts';
import type { NodeResult, NodeRunContext } from './define-node.ts';
import type { PlannedNode } from './plan.ts';

/** The abort a canceled job rejects with: the signal's reason when it is an error, else an AbortError. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The job was canceled', 'AbortError');
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortReason(signal);
}

export async function runNode(
  p: Pick<PlannedNode, 'id' | 'class_type' | 'node'>,
  inputs: Record<string, unknown>,
  ctx: ExecutionContext,
  settings: Readonly<Record<string, unknown>>,
  /** What is left of the job's memory budget for the node (NodeRunContext.maxBytes). */
  maxBytes?: number,
): Promise<NodeResult> {
  const node_id = p.id;
  const nodeCtx: NodeRunContext = {
    node_id,
    signal: ctx.signal,
    settings,
    partner: ctx.partner,
    maxBytes,
    progress(value, max) {
      // Every step is a point where a cancel takes effect.
      throwIfAborted(ctx.signal);
      ctx.emit({ type: 'progress', node_id, value, max });
    },
    preview: (bytes, format) => ctx.emit({ type: 'preview', node_id, format, bytes }),
    text: (text) => ctx.emit({ type: 'text', node_id, text }),
    commitOutput: (output) => ctx.commitOutput({ ...output, node_id }),
    readAsset: (ref) => ctx.readAsset(ref),
  };
  let result: NodeResult;
  try {
    result = await p.node.run(inputs, nodeCtx);
  } catch (err) {
    // A node that fails because the job was canceled (its fetch aborted, progress threw) was canceled, not broken.
    if (ctx.signal.aborted) throw abortReason(ctx.signal);
    throw toExecutionError(err, p);
  }
  const declared = p.node.definition.output.length;
  if (!result || !Array.isArray(result.outputs) || result.outputs.length !== declared) {
    const got = Array.isArray(result?.outputs) ? result.outputs.length : 'no';
    throw new ExecutionError(`${p.class_type} returned ${got} outputs, declares ${declared}`, 'NodeExecutionError', p.id, p.class_type);
  }
  return result;
}

/**
 * exception_type: the error's own `exception_type` when it has one (an
 * ExecutionError, a node's typed error), else its name when that names a
 * kind of error (TypeError, RangeError...), else NodeExecutionError.
 */
export function toExecutionError(err: unknown, p: Pick<PlannedNode, 'id' | 'class_type'>): ExecutionError {
  if (!(err instanceof Error)) return new ExecutionError(String(err), 'NodeExecutionError', p.id, p.class_type, null);
  const own = (err as { exception_type?: unknown }).exception_type;
  const type = typeof own === 'string' && own ? own : err.name.endsWith('Error') && err.name !== 'Error' ? err.name : 'NodeExecutionError';
  return new ExecutionError(err.message, type, p.id, p.class_type, err.stack ?? null);
}
