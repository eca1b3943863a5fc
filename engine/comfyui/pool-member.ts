// One engine server of the pool: its health loop (/system_stats, periodic,
// with backoff while failing), its node definitions (fetched when it comes up,
// refreshed), its WebSocket (messages routed to the job listening for their
// prompt id), the canceled prompts it may still run, what it holds in memory
// (model-memory.ts) and its warm-up. A server that went away (health failed,
// or its socket came back after a drop, which a restart looks like) is taken
// to have lost its models, and is warmed up again before it takes a job.
import { type BinaryFrame, decodeBinaryFrame } from './binary-frames.ts';
import { createModelMemory } from './model-memory.ts';
import type { JobListener, PoolOptions } from './pool.ts';
import type { SlotWorker } from './slot-acquire.ts';
import { createWorkerClient } from './worker-client.ts';
import { openWorkerSocket } from './worker-socket.ts';

export type Member = SlotWorker & {
  /** The pool closes: no more checks, socket closed. */
  stop(): void;
  /** Leaves the pool: stopped, and the jobs running there told through `gone`. */
  leave(): void;
};

export interface MemberHooks {
  isClosed(): boolean;
  /** Something changed that may free a slot or end a wait. */
  wake(): void;
}

export function createMember(url: string, opts: PoolOptions, hooks: MemberHooks): Member {
  const client = createWorkerClient(url, opts.dispatcher, opts.timeouts);
  const listeners = new Map<string, JobListener>();
  const lingering = new Map<string, () => void>();
  const gone = new AbortController();
  /** Checks of lingering prompts so far: they start soon and slow down to the health period. */
  let lingerChecks = 0;
  let lingerSince = 0;
  let current: string | null = null;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let defsAt = 0;
  let checking = false;
  let warmingNow = false;
  let warmAgain = false;
  // Outages seen (health failing, socket dropped), and the one the last warm-up followed: the health
  // loop and the socket both see a restart come back, which calls for one warm-up, not two.
  let outages = 0;
  let warmedAfter = -1;
  const off = () => hooks.isClosed() || worker.removed;

  const worker: Omit<Member, 'stop' | 'leave'> = {
    url: client.url,
    client,
    healthy: false,
    everUp: false,
    probed: false,
    running: 0,
    defs: null,
    socket: null,
    state: 'active',
    warming: false,
    removed: false,
    models: createModelMemory(opts.modelsPerServer),
    gone: gone.signal,
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

  /** The server may have restarted: what it held is gone, and the warm-up runs (again) before its next job. */
  function wentAway(): void {
    if (warmedAfter === outages) return;
    warmedAfter = outages;
    worker.models.forget();
    if (!opts.warmUp || off()) return;
    if (warmingNow) {
      warmAgain = true;
      return;
    }
    warmingNow = true;
    worker.warming = true;
    void opts
      .warmUp(worker)
      .catch((err) => {
        // It joins anyway: a warm-up only saves the first job a load, and a broken one (a model this
        // server lacks, a typo) must not shrink the pool; its jobs then show the real problem.
        opts.log('warm-up failed; the worker takes jobs anyway', { worker: url, error: err instanceof Error ? err.message : String(err) });
      })
      .finally(() => {
        warmingNow = false;
        if (warmAgain && !off()) {
          warmAgain = false;
          warmedAfter = -1;
          return wentAway();
        }
        worker.warming = false;
        hooks.wake();
      });
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
    const frame: BinaryFrame | null = decodeBinaryFrame(bytes);
    if (!frame || frame.kind === 'unknown') return;
    // Type-1 previews and text frames carry no prompt id: they belong to the prompt the worker is running.
    const pid = (frame.kind === 'preview' ? frame.prompt_id : null) ?? current;
    if (pid !== null) listeners.get(pid)?.onBinary(frame);
  }

  function startSocket(): void {
    if (worker.socket || off()) return;
    worker.socket = openWorkerSocket({
      url: client.url,
      clientId: opts.clientId,
      backoffMaxMs: opts.backoffMaxMs,
      handlers: {
        onMessage,
        onBinary,
        onUp: (reconnected) => {
          for (const l of [...listeners.values()]) l.onSocketUp();
          if (reconnected) wentAway();
        },
        onDown: () => {
          outages++;
          current = null;
          for (const l of [...listeners.values()]) l.onSocketDown();
          schedule(0);
        },
      },
    });
  }

  function schedule(ms: number): void {
    if (off()) return;
    clearTimeout(timer);
    timer = setTimeout(check, ms);
    timer.unref?.();
  }

  async function check(): Promise<void> {
    if (checking || off()) return;
    checking = true;
    try {
      await client.systemStats(opts.healthTimeoutMs);
      if (!worker.defs || Date.now() - defsAt >= opts.definitionsRefreshMs) {
        worker.defs = await client.objectInfo();
        defsAt = Date.now();
      }
      if (lingering.size > 0) await letGo();
      if (off()) return;
      const cameUp = !worker.healthy;
      if (cameUp) opts.log(worker.everUp ? 'worker is back' : 'worker is up', { worker: url });
      failures = 0;
      worker.healthy = true;
      worker.everUp = true;
      startSocket();
      if (cameUp) wentAway();
      hooks.wake();
      schedule(lingering.size > 0 ? Math.min(opts.healthIntervalMs, 25 * 2 ** Math.min(lingerChecks++, 10)) : opts.healthIntervalMs);
    } catch (err) {
      failures++;
      if (worker.healthy) opts.log('worker is down', { worker: url, error: err instanceof Error ? err.message : String(err) });
      // Down may be a restart: what it held is not counted on from now (and the warm-up runs again once it is back).
      if (worker.healthy) {
        outages++;
        worker.models.forget();
      }
      worker.healthy = false;
      schedule(Math.min(200 * 2 ** Math.min(failures - 1, 10), opts.backoffMaxMs));
    } finally {
      checking = false;
      if (!worker.probed) {
        worker.probed = true;
        // A job waiting for this worker in particular (prefer) may go elsewhere now.
        hooks.wake();
      }
    }
  }

  schedule(0);
  const stop = () => {
    clearTimeout(timer);
    worker.socket?.close();
  };
  return Object.assign(worker, {
    stop,
    leave() {
      worker.removed = true;
      worker.healthy = false;
      stop();
      // Its lingering prompts were sent a cancel already: nothing checks them any more, so their slots go.
      for (const release of [...lingering.values()]) release();
      lingering.clear();
      gone.abort(new Error(`the worker ${worker.url} was removed from the pool`));
    },
  });
}
