// Reads a finished prompt's history entry: how it ended (success, error,
// interrupted) and what each output node showed (its ui, files included),
// which covers whatever the WebSocket messages missed.
import { ExecutionError } from '../types.ts';
import { executionErrorOf } from './exception-types.ts';

export type Verdict = { kind: 'success' } | { kind: 'error'; error: ExecutionError } | { kind: 'interrupted'; data: Record<string, unknown> };

/** What a history entry says about how the prompt ended. */
export function verdictOf(entry: Record<string, unknown>): Verdict {
  const status = (entry.status ?? {}) as { status_str?: unknown; messages?: unknown };
  const messages = Array.isArray(status.messages) ? (status.messages as unknown[]) : [];
  const find = (type: string) => {
    const m = messages.find((x) => Array.isArray(x) && x[0] === type) as [string, Record<string, unknown>] | undefined;
    return m ? (m[1] ?? {}) : null;
  };
  if (status.status_str === 'error') {
    const interrupted = find('execution_interrupted');
    if (interrupted) return { kind: 'interrupted', data: interrupted };
    const err = find('execution_error');
    return { kind: 'error', error: err ? executionErrorOf(err) : new ExecutionError('The workflow failed on the worker.', 'ExecutionError') };
  }
  return { kind: 'success' };
}

export function outputsOf(entry: Record<string, unknown>): Record<string, unknown> {
  const outputs = entry.outputs;
  return outputs && typeof outputs === 'object' ? (outputs as Record<string, unknown>) : {};
}
