// The fake worker's prompt queue, executor and history: items are the real
// server's 5-tuples, run one at a time by priority number with the local
// engine; each ends with execution_success / execution_error /
// execution_interrupted, its history entry written, a status broadcast, and
// the final `executing {node: null}` — in that order, as the real server.
// Items keep extra_data as submitted (API keys included, as /queue shows
// them); the history entry's copy is without the API keys.
import { type Engine, ExecutionError, type Workflow } from '../../engine/types.ts';
import type { NodeCache } from './comfyui-cache.ts';
import { formatInputs, sentMessage, tracebackOf } from './comfyui-execution-error.ts';
import type { FileStore } from './comfyui-files.ts';
import { createPromptRun, type PromptRun, type WorkerMessage } from './comfyui-run.ts';

export type QueueItem = [number: number, prompt_id: string, prompt: Workflow, extra_data: Record<string, unknown>, outputs_to_execute: string[]];

export interface HistoryEntry {
  prompt: QueueItem;
  outputs: Record<string, Record<string, unknown>>;
  status: { status_str: 'success' | 'error'; completed: boolean; messages: Array<[string, Record<string, unknown>]> };
  meta: Record<string, Record<string, unknown>>;
}

export interface QueuedPrompt {
  item: QueueItem;
  seq: number;
}

/** extra_data keys the real server leaves out of history entries (the partner nodes' API keys). */
export const SENSITIVE_EXTRA_DATA_KEYS = ['auth_token_comfy_org', 'api_key_comfy_org'];

export interface PromptQueue {
  pending: QueuedPrompt[];
  running: (QueuedPrompt & { run: PromptRun }) | null;
  history: Map<string, HistoryEntry>;
  put(item: QueueItem): void;
  remaining(): number;
  /** Interrupts the running prompt (only if it is `prompt_id` when given); true when one was. */
  interrupt(prompt_id?: string): boolean;
  /** Removes pending prompts matching; returns their ids. */
  remove(match: (id: string) => boolean): string[];
  /** Resolves when nothing is pending or running. */
  idle(): Promise<void>;
  /** Resolves with a prompt's history entry once written. */
  finished(prompt_id: string): Promise<HistoryEntry>;
  /** Drops everything (a crash): the running prompt is aborted and forgotten, the cache emptied. */
  reset(): void;
}

export interface QueueDeps {
  engine: Engine;
  files: FileStore;
  cache: NodeCache;
  /** A message of a prompt for its client (null: nobody). */
  send(client_id: string | null, prompt_id: string, msg: WorkerMessage): void;
  /** A prompt starts running (before its first event). */
  started(run: PromptRun): void;
  /** The queue changed: `status` to every socket. */
  queueChanged(): void;
}

export function createPromptQueue(deps: QueueDeps): PromptQueue {
  let seq = 0;
  let generation = 0;
  const waiters = new Map<string, Array<(e: HistoryEntry) => void>>();
  let idleWaiters: Array<() => void> = [];

  const q: PromptQueue = {
    pending: [],
    running: null,
    history: new Map(),
    put(item) {
      q.pending.push({ item, seq: seq++ });
      q.pending.sort((a, b) => a.item[0] - b.item[0] || a.seq - b.seq);
      deps.queueChanged();
      queueMicrotask(pump);
    },
    remaining: () => q.pending.length + (q.running ? 1 : 0),
    interrupt(prompt_id) {
      if (!q.running || (prompt_id !== undefined && q.running.item[1] !== prompt_id)) return false;
      q.running.run.interrupt();
      return true;
    },
    remove(match) {
      const gone = q.pending.filter((p) => match(p.item[1]));
      if (gone.length === 0) return [];
      q.pending = q.pending.filter((p) => !gone.includes(p));
      deps.queueChanged();
      settleIdle();
      return gone.map((p) => p.item[1]);
    },
    idle: () => (q.remaining() === 0 ? Promise.resolve() : new Promise((r) => idleWaiters.push(r))),
    finished(prompt_id) {
      const done = q.history.get(prompt_id);
      if (done) return Promise.resolve(done);
      return new Promise((r) => waiters.set(prompt_id, [...(waiters.get(prompt_id) ?? []), r]));
    },
    reset() {
      generation++;
      q.running?.run.abort(new DOMException('Crashed', 'AbortError'));
      q.running = null;
      q.pending = [];
      q.history.clear();
      deps.cache.clear();
      settleIdle();
    },
  };

  function settleIdle() {
    if (q.remaining() > 0) return;
    const ws = idleWaiters;
    idleWaiters = [];
    for (const w of ws) w();
  }

  async function pump() {
    if (q.running || q.pending.length === 0) return;
    const next = q.pending.shift()!;
    const [, prompt_id, prompt, extra_data] = next.item;
    const client_id = typeof extra_data.client_id === 'string' ? extra_data.client_id : null;
    const run = createPromptRun(prompt_id, deps.files, deps.cache.begin(prompt), (msg) => deps.send(client_id, prompt_id, msg));
    const mine = generation;
    q.running = { ...next, run };
    deps.started(run);
    deps.queueChanged();
    let status: HistoryEntry['status']['status_str'] = 'success';
    try {
      await deps.engine.execute({ id: prompt_id, account_id: 'worker', workflow: prompt, extra_data }, run.ctx);
      run.add('execution_success', { prompt_id, timestamp: Date.now() });
    } catch (err) {
      status = 'error';
      if (mine !== generation) return; // crashed: the process that ran it is gone, nothing more is said
      const where = { prompt_id, node_id: run.current?.node ?? null, node_type: run.current?.class_type ?? null, executed: [...run.executed] };
      if (run.interrupted) {
        run.add('execution_interrupted', { ...where, timestamp: Date.now() });
      } else {
        const e = err instanceof ExecutionError ? err : new ExecutionError(String((err as Error)?.message ?? err), 'Exception');
        run.add('execution_error', {
          ...where,
          node_id: e.node_id ?? where.node_id,
          node_type: e.class_type ?? where.node_type,
          exception_message: run.injected?.exception_message ?? sentMessage(e.message),
          exception_type: e.exception_type,
          traceback: run.injected?.traceback ?? (e.node_id ? tracebackOf(e.traceback) : []),
          current_inputs: run.current ? formatInputs(run.current.inputs) : {},
          current_outputs: [...run.executed],
          timestamp: Date.now(),
        });
      }
    } finally {
      if (mine === generation) {
        const [n, id, p, extra, outputs] = next.item;
        const kept = Object.fromEntries(Object.entries(extra).filter(([k]) => !SENSITIVE_EXTRA_DATA_KEYS.includes(k)));
        const entry: HistoryEntry = {
          prompt: [n, id, p, kept, outputs],
          outputs: run.outputs,
          status: { status_str: status, completed: status === 'success', messages: run.messages },
          meta: run.meta,
        };
        // History first, then the queue's status, then the final executing (the real prompt_worker's order).
        q.history.set(prompt_id, entry);
        q.running = null;
        deps.queueChanged();
        run.send({ kind: 'json', type: 'executing', data: { node: null, prompt_id } });
        for (const w of waiters.get(prompt_id) ?? []) w(entry);
        waiters.delete(prompt_id);
        settleIdle();
        queueMicrotask(pump);
      }
    }
  }

  return q;
}
