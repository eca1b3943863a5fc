// What the request thread and a worker thread of the local engine say to
// each other. Everything is structured-cloneable: no functions, no class
// instances other than those the structured clone keeps (typed arrays).

import type { EngineEvent, EngineJob, NewOutput } from '../../types.ts';
import { ExecutionError } from '../../types.ts';

/** How a thread is started and spoken to, whatever the runtime (Web Workers, Node's worker_threads). */
export interface ThreadHandle {
  post(message: ToThread): void;
  /** `error`: the thread died (an uncaught error, or its heap limit: `outOfMemory`); it is gone. */
  listen(on: { message(data: FromThread): void; error(problem: { message: string; outOfMemory: boolean }): void }): void;
  terminate(): void;
  /** Whether the thread should keep the process alive: while it runs a job, not while idle. */
  hold?(busy: boolean): void;
}

export interface ThreadSpawner {
  /** Starts a worker thread running engine/local/thread/serve.ts's serveThread; heapMb bounds its heap where the runtime can. */
  spawn(options: { heapMb: number }): ThreadHandle;
  /** Threads that can compute at once here: the pool's default size. */
  readonly parallelism: number;
}

/** The thread side of a handle: what serveThread is given by its entry. */
export interface ThreadSide {
  post(message: FromThread): void;
  listen(onMessage: (data: ToThread) => void): void;
}

export interface ThreadSetup {
  /** A module exporting `nodes` (LocalNode[]); the built-in nodes when absent. */
  nodesModule?: string;
  /** Settings that clone; those that are functions are named in settingCalls and called back. */
  settings: Record<string, unknown>;
  settingCalls: string[];
  cache: { entries: number; bytes: number };
  maxJobMemoryBytes: number;
}

export type ToThread =
  | { t: 'setup'; setup: ThreadSetup }
  | { t: 'run'; job: Pick<EngineJob, 'id' | 'account_id' | 'workflow'> }
  | { t: 'reply'; id: number; ok: true; value: unknown }
  | { t: 'reply'; id: number; ok: false; error: WireError };

/** What a thread asks of the request thread, answered by a `reply` of the same id. */
export type ThreadCall =
  | { op: 'commitOutput'; output: NewOutput & { node_id: string; body: Uint8Array } }
  | { op: 'readAsset'; ref: { id?: string; name?: string } }
  | { op: 'setting'; name: string; args: unknown[] }
  | { op: 'runNode'; node_id: string; class_type: string; inputs: Record<string, unknown>; maxBytes: number };

export type FromThread =
  | { t: 'emit'; event: EngineEvent }
  | ({ t: 'call'; id: number } & ThreadCall)
  | { t: 'done' }
  | { t: 'failed'; error: WireError };

/** An error as it crosses: an ExecutionError keeps its fields, anything else its name and message. */
export interface WireError {
  name: string;
  message: string;
  execution?: { exception_type: string; node_id: string | null; class_type: string | null; traceback: string | null };
}

export function toWire(err: unknown): WireError {
  if (err instanceof ExecutionError) {
    const { exception_type, node_id, class_type, traceback } = err;
    return { name: err.name, message: err.message, execution: { exception_type, node_id, class_type, traceback } };
  }
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: 'Error', message: String(err) };
}

export function fromWire(wire: WireError): Error {
  if (wire.execution) {
    const { exception_type, node_id, class_type, traceback } = wire.execution;
    return new ExecutionError(wire.message, exception_type, node_id, class_type, traceback);
  }
  return Object.assign(new Error(wire.message), { name: wire.name });
}
