// Reads a finished prompt's history entry: its verdict (success, error,
// interrupted) and its files. Each file streams from `/view` straight into
// commitOutput, so an output is never held whole in memory; every file
// reference is committed (outputs as outputs, temp files as temporary), and
// text a node showed (`ui.text`) becomes a text output, so nothing is dropped.
import { ExecutionError, type ExecutionContext } from '../types.ts';
import { executionErrorOf } from './exception-types.ts';
import { fileRefsOf, textsOf } from './output-files.ts';
import type { WorkerClient } from './worker-client.ts';

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

export async function commitFiles(entry: Record<string, unknown>, client: WorkerClient, ctx: ExecutionContext): Promise<void> {
  const refs = fileRefsOf(outputsOf(entry));
  for (const ref of refs) {
    ctx.signal.throwIfAborted();
    const view = await client.view({ filename: ref.filename, subfolder: ref.subfolder, type: ref.folder }, ctx.signal);
    const served = view.content_type?.split(';')[0].trim();
    const content_type = ref.content_type === 'application/octet-stream' && served ? served : ref.content_type;
    try {
      await ctx.commitOutput({ node_id: ref.node_id, name: ref.filename, type: ref.type, content_type, body: view.body, temporary: ref.temporary || undefined });
    } finally {
      // A commit that failed part-way leaves the response open; free the connection.
      (view.body as { destroy?: () => void }).destroy?.();
    }
  }
  // A node that saved files shows what it saved; only a node with nothing else to give has its text kept.
  const withFiles = new Set(refs.map((r) => r.node_id));
  const encoder = new TextEncoder();
  for (const [node_id, index, text] of textsOf(outputsOf(entry))) {
    if (withFiles.has(node_id)) continue;
    ctx.signal.throwIfAborted();
    const name = `text_${node_id.replace(/[^\w.-]/g, '_')}_${index}.txt`;
    await ctx.commitOutput({ node_id, name, type: 'text', content_type: 'text/plain; charset=utf-8', body: encoder.encode(text) });
  }
}
