// The pool of workers (each one's health, definitions, socket and memory:
// pool-member.ts) and slots: a job takes the least-loaded healthy worker that
// has its node classes (or, with model affinity, one holding its models:
// affinity.ts), or waits for one. A worker still holding a prompt we canceled
// (or timed out) gets no job until its /queue no longer lists it, which the
// health loop checks; only then is that slot free again.
//
// Workers come and go at run time: one added joins like the first ones
// (health, definitions, socket, warm-up); one draining takes no new job and
// its drain settles once its jobs are done; one removed leaves at once, its
// running jobs told through its `gone` signal (the engine runs them again
// elsewhere, as for a lost worker).
//
// With shared slots (worker-slots.ts: other processes use the same workers)
// a job takes a worker only once the shared registry gives it a slot there
// too (slot-acquire.ts).

import type { HttpDispatcher } from '../../lib/http-dispatcher.ts';
import type { EngineReadiness, NodeDefinition } from '../types.ts';
import type { BinaryFrame } from './binary-frames.ts';
import type { ModelMemory } from './model-memory.ts';
import { createMember, type Member } from './pool-member.ts';
import { type AcquireDeps, acquireSlot } from './slot-acquire.ts';
import type { WorkerClient, WorkerTimeouts } from './worker-client.ts';
import type { SharedSlots } from './worker-slots.ts';
import type { WorkerSocket } from './worker-socket.ts';

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
  /** 'draining': takes no new job (drainServer). */
  state: 'active' | 'draining';
  /** Runs the warm-up workflow: not free meanwhile. */
  warming: boolean;
  /** The models its prompts loaded, as far as we know (forgotten when it went away). */
  readonly models: ModelMemory;
  /** Aborted when it is removed from the pool: a job running there is lost. */
  readonly gone: AbortSignal;
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
  /** The model files the job loads (model-loaders.ts): workers holding them come first. */
  models?: string[];
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
  /** Model affinity: how long a job may wait for a busy worker holding its models; null: least loaded only. */
  affinityWaitMs: number | null;
  /** Models remembered per worker (LRU). */
  modelsPerServer: number;
  /** Runs the warm-up on a worker that came up (or back); rejects when it failed. */
  warmUp?: (worker: PoolWorker) => Promise<void>;
  log(message: string, detail?: Record<string, unknown>): void;
}

export interface Pool {
  /** The members now, in the order they joined. */
  readonly workers: readonly PoolWorker[];
  /** Joins a worker (or makes a draining one active again); the URL as given, checked by the caller. */
  add(url: string): PoolWorker;
  /** Takes no new job there; settles once it runs none of ours (a lingering canceled prompt included). */
  drain(url: string): Promise<void>;
  /** Leaves the pool now; jobs running there see its `gone` signal. Settles once they let go of it (at once for an unknown URL). */
  remove(url: string): Promise<void>;
  /** A slot on the least-loaded healthy worker that knows these classes; waits for one. */
  acquire(request: SlotRequest): Promise<Slot>;
  readiness(): EngineReadiness;
  /** Resolves once some worker's definitions are known (or after timeoutMs). */
  whenDefinitions(timeoutMs: number): Promise<void>;
  close(): void;
}

const normal = (url: string) => url.replace(/\/+$/, '');

export function createPool(opts: PoolOptions): Pool {
  let closed = false;
  let waiters: Array<() => void> = [];
  let drains: Array<{ worker: Member; done: () => void }> = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
    settleDrains();
  };
  const hooks = { isClosed: () => closed, wake };
  // Mutated in place: the slot logic (deps.workers) sees members come and go.
  const workers: Member[] = opts.urls.map((url) => createMember(url, opts, hooks));
  const find = (url: string) => workers.find((w) => w.url === normal(url));

  function settleDrains(): void {
    // A removed worker's drain waits for its jobs to let go; a drained one's for its lingering prompts too.
    const idle = (w: Member) => closed || (w.removed ? w.running === 0 : w.state !== 'draining' || (w.running === 0 && w.lingering.size === 0));
    const ready = drains.filter((d) => idle(d.worker));
    if (ready.length === 0) return;
    drains = drains.filter((d) => !ready.includes(d));
    for (const d of ready) d.done();
  }

  const deps: AcquireDeps = {
    workers,
    perWorker: opts.perWorker,
    shared: opts.shared,
    retryMs: opts.slotRetryMs ?? 250,
    affinityWaitMs: opts.affinityWaitMs,
    waiting: new Set(),
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
    add(url) {
      const known = find(url);
      if (known) {
        if (known.state === 'draining') opts.log('worker active again', { worker: known.url });
        known.state = 'active';
        wake();
        return known;
      }
      const member = createMember(url, opts, hooks);
      workers.push(member);
      opts.log('worker added', { worker: member.url });
      return member;
    },
    drain(url) {
      const w = find(url);
      if (!w) return Promise.resolve();
      if (w.state !== 'draining') opts.log('worker draining', { worker: w.url, running: w.running });
      w.state = 'draining';
      const done = new Promise<void>((resolve) => drains.push({ worker: w, done: resolve }));
      settleDrains();
      return done;
    },
    remove(url) {
      const w = find(url);
      if (!w) return Promise.resolve();
      workers.splice(workers.indexOf(w), 1);
      opts.log('worker removed', { worker: w.url, running: w.running });
      const done = new Promise<void>((resolve) => drains.push({ worker: w, done: resolve }));
      w.leave();
      wake();
      return done;
    },
    readiness() {
      const active = workers.filter((w) => w.state === 'active');
      if (active.some((w) => w.healthy && w.defs && !w.warming)) return { state: 'ready' };
      if (workers.length === 0) return { state: 'unavailable', detail: 'the pool has no engine server: add one' };
      if (active.length === 0) return { state: 'unavailable', detail: 'every engine server of the pool is draining' };
      // Its nodes are known: jobs are taken and wait for the warm-up.
      if (active.some((w) => w.healthy && w.defs)) return { state: 'starting', detail: 'the engine servers are warming up', queuesJobs: true };
      if (!active.some((w) => w.everUp))
        return { state: 'starting', detail: `waiting for a worker to answer (${active.map((w) => w.url).join(', ')})` };
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
      for (const w of workers) w.stop();
      wake();
    },
  };
}
