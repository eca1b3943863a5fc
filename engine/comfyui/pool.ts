// The pool of workers: health through /system_stats (periodic, with backoff
// for a failing worker), each worker's node definitions (fetched when it
// comes up, refreshed), one WebSocket per worker whose messages are routed to
// the job listening for their prompt id, and slots: a job takes the
// least-loaded healthy worker that has its node classes, or waits for one.
// A worker still holding a prompt we canceled (or timed out) gets no job
// until its /queue no longer lists it, which the health loop checks; only
// then is that slot free again.
//
// With shared slots (worker-slots.ts: other processes use the same workers)
// a job takes a worker only once the shared registry gives it a slot there
// too (slot-acquire.ts).

import type { HttpDispatcher } from '../../lib/http-dispatcher.ts';
import type { EngineReadiness, NodeDefinition } from '../types.ts';
import { type BinaryFrame, decodeBinaryFrame } from './binary-frames.ts';
import { type AcquireDeps, acquireSlot, type SlotWorker } from './slot-acquire.ts';
import { createWorkerClient, type WorkerClient, type WorkerTimeouts } from './worker-client.ts';
import type { SharedSlots } from './worker-slots.ts';
import { openWorkerSocket, type WorkerSocket } from './worker-socket.ts';

export interface JobListener {
  onMessage(msg: { type: string; data: Record<string, unknown> }): void;
  onBinary(frame: BinaryFrame): void;
  onSocketDown(): void;
  onSocketUp(): void;
}

export interface PoolWorker {
  readonly url: string;
  readonly client: WorkerClient;
  healthy: boolean;
  everUp: boolean;
  running: number;
  defs: Record<string, NodeDefinition> | null;
  socket: WorkerSocket | null;
  /** Routes this prompt's messages to the listener until the returned function is called. */
  listen(promptId: string, listener: JobListener): () => void;
  /** Something went wrong talking to it: check its health now rather than at the next tick. */
  suspect(): void;
  /** Canceled prompts it may still run, each with the release of its slot; while any is left it gets no job. */
  readonly lingering: ReadonlyMap<string, () => void>;
}

export interface Slot {
  worker: PoolWorker;
  release(): void;
  /** Frees the slot once the worker no longer lists this prompt (a canceled one it may still run); no job goes to the worker till then. */
  releaseWhenGone(promptId: string): void;
  /** Frees the slot here but leaves the shared one to expire or to the job's re-run: the prompt goes on without us (shutdown). */
  leave(): void;
}

export interface SlotRequest {
  jobId: string;
  /** The workflow's node classes: only a worker that has them all takes it. */
  classTypes: string[];
  signal: AbortSignal;
  /** A worker the job just lost: another one if any is free. */
  avoid?: PoolWorker;
  /** The URL of the worker that holds the job's prompt (a re-run): that one first, and waited for until its health is known. */
  prefer?: string | null;
}

export interface PoolOptions {
  urls: string[];
  perWorker: number;
  clientId: string;
  healthIntervalMs: number;
  healthTimeoutMs: number;
  timeouts: WorkerTimeouts;
  backoffMaxMs: number;
  definitionsRefreshMs: number;
  dispatcher?: HttpDispatcher;
  /** Slots claimed with the engines of other processes; none: this pool's counts alone decide. */
  shared?: SharedSlots;
  /** With shared slots, how often a waiting job asks again (default 250 ms). */
  slotRetryMs?: number;
  log(message: string, detail?: Record<string, unknown>): void;
}

export interface Pool {
  readonly workers: PoolWorker[];
  /** A slot on the least-loaded healthy worker that knows these classes; waits for one. */
  acquire(request: SlotRequest): Promise<Slot>;
  readiness(): EngineReadiness;
  /** Resolves once some worker's definitions are known (or after timeoutMs). */
  whenDefinitions(timeoutMs: number): Promise<void>;
  close(): void;
}

type Member = SlotWorker & {
  stop(): void;
};

export function createPool(opts: PoolOptions): Pool {
  let closed = false;
  let waiters: Array<() => void> = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };

  const workers = opts.urls.map((url) => makeWorker(url));

  function makeWorker(url: string): Member {
    const client = createWorkerClient(url, opts.dispatcher, opts.timeouts);
    const listeners = new Map<string, JobListener>();
    const lingering = new Map<string, () => void>();
    /** Checks of lingering prompts so far: they start soon and slow down to the health period. */
    let lingerChecks = 0;
    let lingerSince = 0;
    let current: string | null = null;
    let failures = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let defsAt = 0;
    let checking = false;

    const worker: Omit<Member, 'stop'> = {
      url: client.url,
      client,
      healthy: false,
      everUp: false,
      probed: false,
      running: 0,
      defs: null,
      socket: null,
      listen(promptId, listener) {
        listeners.set(promptId, listener);
        return () => {
          if (listeners.get(promptId) === listener) listeners.delete(promptId);
        };
      },
      suspect: () => schedule(0),
      lingering,
      linger(promptId, release) {
        if (lingering.size === 0) {
          lingerChecks = 0;
          lingerSince = Date.now();
        }
        lingering.get(promptId)?.();
        lingering.set(promptId, release);
        schedule(0);
      },
    };

    /** Frees the slots of lingering prompts the worker no longer lists. */
    async function letGo(): Promise<void> {
      const q = await client.queue();
      for (const [id, release] of [...lingering]) {
        if (q.running.includes(id) || q.pending.includes(id)) continue;
        lingering.delete(id);
        release();
      }
      if (lingering.size === 0 && Date.now() - lingerSince >= opts.healthIntervalMs) {
        opts.log('worker let go of the canceled prompt', { worker: url, after_ms: Date.now() - lingerSince });
      } else if (lingering.size > 0 && lingerChecks === 3) {
        opts.log('worker still runs a canceled prompt; it gets no job until it lets go', { worker: url, prompts: [...lingering.keys()] });
      }
    }

    function onMessage(msg: { type: string; data: Record<string, unknown> }): void {
      const pid = typeof msg.data.prompt_id === 'string' ? msg.data.prompt_id : null;
      if (msg.type === 'execution_start' || (msg.type === 'executing' && msg.data.node != null)) current = pid ?? current;
      if (pid === null) {
        if (msg.type === 'notification' && current !== null) listeners.get(current)?.onMessage(msg);
        return;
      }
      listeners.get(pid)?.onMessage(msg);
      const ended =
        ['execution_success', 'execution_error', 'execution_interrupted'].includes(msg.type) || (msg.type === 'executing' && msg.data.node == null);
      if (ended && current === pid) current = null;
    }

    function onBinary(bytes: Uint8Array): void {
      const frame = decodeBinaryFrame(bytes);
      if (!frame || frame.kind === 'unknown') return;
      // Type-1 previews and text frames carry no prompt id: they belong to the prompt the worker is running.
      const pid = (frame.kind === 'preview' ? frame.prompt_id : null) ?? current;
      if (pid !== null) listeners.get(pid)?.onBinary(frame);
    }

    function startSocket(): void {
      if (worker.socket || closed) return;
      worker.socket = openWorkerSocket({
        url: client.url,
        clientId: opts.clientId,
        backoffMaxMs: opts.backoffMaxMs,
        handlers: {
          onMessage,
          onBinary,
          onUp: () => {
            for (const l of [...listeners.values()]) l.onSocketUp();
          },
          onDown: () => {
            current = null;
            for (const l of [...listeners.values()]) l.onSocketDown();
            schedule(0);
          },
        },
      });
    }

    function schedule(ms: number): void {
      if (closed) return;
      clearTimeout(timer);
      timer = setTimeout(check, ms);
      timer.unref?.();
    }

    async function check(): Promise<void> {
      if (checking || closed) return;
      checking = true;
      try {
        await client.systemStats(opts.healthTimeoutMs);
        if (!worker.defs || Date.now() - defsAt >= opts.definitionsRefreshMs) {
          worker.defs = await client.objectInfo();
          defsAt = Date.now();
        }
        if (lingering.size > 0) await letGo();
        if (!worker.healthy) opts.log(worker.everUp ? 'worker is back' : 'worker is up', { worker: url });
        failures = 0;
        worker.healthy = true;
        worker.everUp = true;
        startSocket();
        wake();
        schedule(lingering.size > 0 ? Math.min(opts.healthIntervalMs, 25 * 2 ** Math.min(lingerChecks++, 10)) : opts.healthIntervalMs);
      } catch (err) {
        failures++;
        if (worker.healthy) opts.log('worker is down', { worker: url, error: err instanceof Error ? err.message : String(err) });
        worker.healthy = false;
        schedule(Math.min(200 * 2 ** Math.min(failures - 1, 10), opts.backoffMaxMs));
      } finally {
        checking = false;
        if (!worker.probed) {
          worker.probed = true;
          // A job waiting for this worker in particular (prefer) may go elsewhere now.
          wake();
        }
      }
    }

    schedule(0);
    return Object.assign(worker, { stop: () => clearTimeout(timer) });
  }

  const deps: AcquireDeps = {
    workers,
    perWorker: opts.perWorker,
    shared: opts.shared,
    retryMs: opts.slotRetryMs ?? 250,
    isClosed: () => closed,
    onWake: (f) => void waiters.push(f),
    offWake: (f) => {
      waiters = waiters.filter((w) => w !== f);
    },
    wake,
  };

  return {
    workers,
    acquire: (request) => acquireSlot(deps, request),
    readiness() {
      if (workers.some((w) => w.healthy && w.defs)) return { state: 'ready' };
      if (!workers.some((w) => w.everUp))
        return { state: 'starting', detail: `waiting for a worker to answer (${workers.map((w) => w.url).join(', ')})` };
      return { state: 'unavailable', detail: 'no worker is reachable' };
    },
    async whenDefinitions(timeoutMs) {
      const until = Date.now() + timeoutMs;
      while (!closed && !workers.some((w) => w.defs) && Date.now() < until) {
        await new Promise<void>((r) => {
          const t = setTimeout(r, 50);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    },
    close() {
      closed = true;
      for (const w of workers) {
        w.stop();
        w.socket?.close();
      }
      wake();
    },
  };
}
