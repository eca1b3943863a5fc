// The request thread's side of the local engine's worker threads: a pool of
// threads, each running one job at a time. A job waits for a free thread
// (one that last ran the same account first: its cache holds that account's
// results). While it runs, the pool answers the thread's calls with the
// job's context and forwards its events. A cancel stops the thread at once,
// whatever it computes, and the pool starts another when one is needed; a
// thread that dies (its heap limit, a crash) fails its job and is replaced.
import { readCapped } from '../../../lib/bytes.ts';
import { type EngineJob, type ExecutionContext, ExecutionError } from '../../types.ts';
import type { NodeRegistry } from '../registry.ts';
import { abortReason, runNode } from '../run-node.ts';
import { type FromThread, fromWire, type ThreadCall, type ThreadHandle, type ThreadSetup, type ThreadSpawner, toWire } from './protocol.ts';

export interface PoolOptions {
  spawner: ThreadSpawner;
  size: number;
  heapMb: number;
  setup: ThreadSetup;
  /** The request thread's registry, for the nodes that run here. */
  registry: NodeRegistry;
  settings: Readonly<Record<string, unknown>>;
}

interface Thread {
  handle: ThreadHandle;
  /** The account whose job ran last, whose results its cache holds. */
  scope: string | null;
  /** The job running on it: where its messages and its death go. */
  job: { message(m: FromThread): void; died(err: Error): void } | null;
}

export interface ThreadPool {
  run(job: EngineJob, ctx: ExecutionContext): Promise<void>;
  readonly threads: number;
  close(): void;
}

export function createThreadPool(opts: PoolOptions): ThreadPool {
  const idle: Thread[] = [];
  const all = new Set<Thread>();
  const waiting: Array<{ scope: string; take(t: Thread): void; fail(err: Error): void }> = [];
  let closed = false;

  function start(): Thread {
    const thread: Thread = { handle: opts.spawner.spawn({ heapMb: opts.heapMb }), scope: null, job: null };
    all.add(thread);
    thread.handle.listen({
      message: (m) => thread.job?.message(m),
      error: ({ message, outOfMemory }) => {
        all.delete(thread);
        const at = idle.indexOf(thread);
        if (at >= 0) idle.splice(at, 1);
        const err = outOfMemory
          ? new ExecutionError(`The job ran out of memory: it needed more than its thread's heap limit of ${opts.heapMb} MiB.`, 'OOMError')
          : new ExecutionError(`The job's worker thread stopped: ${message}`, 'WorkerError');
        thread.job?.died(err);
      },
    });
    thread.handle.post({ t: 'setup', setup: opts.setup });
    return thread;
  }

  function acquire(scope: string, signal: AbortSignal): Promise<Thread> {
    const own = idle.findIndex((t) => t.scope === scope);
    if (own >= 0 || idle.length > 0) return Promise.resolve(idle.splice(own >= 0 ? own : idle.length - 1, 1)[0]);
    if (all.size < opts.size) return Promise.resolve(start());
    return new Promise((resolve, reject) => {
      const entry = { scope, take: resolve, fail: reject };
      waiting.push(entry);
      signal.addEventListener(
        'abort',
        () => {
          const at = waiting.indexOf(entry);
          if (at >= 0) waiting.splice(at, 1);
          reject(abortReason(signal));
        },
        { once: true },
      );
    });
  }

  /** Gives a thread (or, when it was stopped, the room for one) to the next waiting job. */
  function release(thread: Thread, healthy: boolean): void {
    thread.job = null;
    thread.handle.hold?.(false);
    if (!healthy) {
      all.delete(thread);
      thread.handle.terminate();
    }
    if (closed) return;
    if (waiting.length === 0) {
      if (healthy) idle.push(thread);
      return;
    }
    const same = waiting.findIndex((w) => w.scope === thread.scope);
    const [next] = waiting.splice(healthy && same >= 0 ? same : 0, 1);
    next.take(healthy ? thread : start());
  }

  async function run(job: EngineJob, ctx: ExecutionContext): Promise<void> {
    if (closed) throw new Error('the engine is closed');
    ctx.signal.throwIfAborted();
    const thread = await acquire(job.account_id, ctx.signal);
    thread.scope = job.account_id;
    thread.handle.hold?.(true);
    let healthy = true;
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          // Stopped mid-computation: nothing it was doing can be trusted, its cache included.
          healthy = false;
          reject(abortReason(ctx.signal));
        };
        if (ctx.signal.aborted) return onAbort();
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        const settle = (fn: () => void) => {
          ctx.signal.removeEventListener('abort', onAbort);
          fn();
        };
        thread.job = {
          died: (err) => {
            healthy = false;
            settle(() => reject(err));
          },
          message: (m) => {
            if (m.t === 'emit') ctx.emit(m.event);
            else if (m.t === 'done') settle(resolve);
            else if (m.t === 'failed') settle(() => reject(fromWire(m.error)));
            else if (m.t === 'call') answer(thread, m.id, m, ctx);
          },
        };
        thread.handle.post({ t: 'run', job: { id: job.id, account_id: job.account_id, workflow: job.workflow } });
      });
    } finally {
      release(thread, healthy && !closed);
    }
  }

  function answer(thread: Thread, id: number, request: ThreadCall, ctx: ExecutionContext): void {
    serveCall(request, ctx, opts).then(
      (value) => thread.job && thread.handle.post({ t: 'reply', id, ok: true, value }),
      (err: unknown) => thread.job && thread.handle.post({ t: 'reply', id, ok: false, error: toWire(err) }),
    );
  }

  return {
    run,
    get threads() {
      return all.size;
    },
    close() {
      closed = true;
      for (const thread of all) {
        thread.job?.died(new ExecutionError('The engine was closed.', 'WorkerError'));
        thread.handle.terminate();
      }
      all.clear();
      idle.length = 0;
      for (const entry of waiting.splice(0)) entry.fail(new ExecutionError('The engine was closed.', 'WorkerError'));
    },
  };
}

async function serveCall(request: ThreadCall, ctx: ExecutionContext, opts: Pick<PoolOptions, 'registry' | 'settings'>): Promise<unknown> {
  switch (request.op) {
    case 'commitOutput':
      return ctx.commitOutput(request.output);
    case 'readAsset': {
      const asset = await ctx.readAsset(request.ref);
      if (!asset) return null;
      const { body, ...rest } = asset;
      return { ...rest, bytes: await readCapped(body) };
    }
    case 'setting': {
      const fn = opts.settings[request.name];
      if (typeof fn !== 'function') throw new Error(`no setting ${request.name} to call`);
      return fn(...request.args);
    }
    case 'runNode': {
      const node = opts.registry.get(request.class_type);
      if (!node) throw new Error(`no node class ${request.class_type} on the request thread`);
      return runNode({ id: request.node_id, class_type: request.class_type, node }, request.inputs, ctx, opts.settings, request.maxBytes);
    }
  }
}
