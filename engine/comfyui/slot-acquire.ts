// How a job gets a slot on one of the pool's workers: the free workers that
// have its node classes, least loaded first, or with model affinity those
// holding its models first (affinity.ts); it waits while none is free. A
// worker draining, warming up or removed is not free.
// With shared slots (worker-slots.ts) a worker is taken only once the shared
// registry gives the job a slot there too: each worker is reserved here while
// the registry answers (so this process's other jobs look elsewhere
// meanwhile), and a job the registry turned away everywhere asks again on the
// next wake or after retryMs, since other processes free slots without
// waking us.
import { byAffinity } from './affinity.ts';
import type { PoolWorker, Slot, SlotRequest } from './pool.ts';
import type { SharedSlots } from './worker-slots.ts';

export type SlotWorker = PoolWorker & {
  /** Its health was checked at least once (whatever the answer). */
  probed: boolean;
  linger(promptId: string, release: () => void): void;
  /** Left the pool: it gets no job, and its slots are freed without asking it. */
  removed: boolean;
};

export interface AcquireDeps {
  workers: readonly SlotWorker[];
  perWorker: number;
  shared?: SharedSlots;
  retryMs: number;
  /** Model affinity: how long a job may wait for a busy worker holding its models; null: least loaded only. */
  affinityWaitMs: number | null;
  /** The requests waiting for a slot now (affinity leaves a worker to the one holding all its models). */
  waiting: Set<SlotRequest>;
  isClosed(): boolean;
  /** Calls `f` once at the next wake (a slot freed here, a worker answered). */
  onWake(f: () => void): void;
  offWake(f: () => void): void;
  wake(): void;
}

const knows = (w: PoolWorker, classTypes: string[]) => !w.defs || classTypes.every((c) => Object.hasOwn(w.defs!, c));
const isFree = (w: SlotWorker, perWorker: number) =>
  w.healthy && !w.removed && w.state === 'active' && !w.warming && w.lingering.size === 0 && w.running < perWorker;

/** The workers free for the job now, best first; or a wait for a busy worker holding its models (`mayWait`: the job is within its bound). */
export function candidates(deps: AcquireDeps, req: SlotRequest, mayWait = false): { list: SlotWorker[] } | { holdFor: string } {
  // A draining worker's classes do not count: it takes no new job, so a job must not wait for it.
  const active = deps.workers.filter((w) => !w.removed && w.state === 'active');
  // A job waits for a worker that has its classes (busy or down for now) rather than
  // go to one that would refuse it; only when none has them may any worker try.
  const knowing = active.filter((w) => knows(w, req.classTypes));
  const eligible = knowing.length > 0 ? knowing : active;
  const holder = req.prefer ? eligible.find((w) => w.url === req.prefer) : undefined;
  // A re-run on the worker holding its prompt follows that prompt instead of running it again:
  // worth waiting for until that worker's health is known.
  if (holder && !holder.probed) return { list: [] };
  const free = eligible.filter((w) => isFree(w, deps.perWorker));
  const others = free.filter((w) => w !== req.avoid);
  // Least loaded first, in the workers' order on ties (the sort is stable).
  const list = [...(others.length > 0 ? others : free)].sort((a, b) => a.running - b.running);
  // The holder before all: its prompt is there already, which beats any model.
  if (holder && list.includes(holder)) return { list: [holder, ...list.filter((w) => w !== holder)] };
  if (deps.affinityWaitMs === null || !req.models?.length) return { list };
  const fits = (w: SlotWorker, r: SlotRequest) => w !== r.avoid && knows(w, r.classTypes);
  return byAffinity({ free: list, eligible: eligible.filter((w) => w !== req.avoid), req, waiting: deps.waiting, mayWait, fits });
}

export function acquireSlot(deps: AcquireDeps, req: SlotRequest): Promise<Slot> {
  const { shared } = deps;
  const { signal } = req;
  return new Promise((resolve, reject) => {
    let settled = false;
    let claiming = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    // A job may wait for a busy worker holding its models until then, not after.
    const affinityUntil = Date.now() + (deps.affinityWaitMs ?? 0);
    let bound: ReturnType<typeof setTimeout> | undefined;
    let boundPassed = false;
    deps.waiting.add(req);
    const finish = () => {
      deps.waiting.delete(req);
      settled = true;
      clearTimeout(retry);
      clearTimeout(bound);
      signal.removeEventListener('abort', onAbort);
      deps.offWake(attempt);
    };
    const fail = (err: unknown) => {
      finish();
      reject(err);
    };
    const grant = (w: SlotWorker) => {
      finish();
      resolve(slotOn(deps, w, req.jobId));
    };
    const wait = () => {
      deps.onWake(attempt);
      if (!shared || retry !== undefined) return;
      retry = setTimeout(() => {
        retry = undefined;
        deps.offWake(attempt);
        attempt();
      }, deps.retryMs);
      (retry as { unref?: () => void }).unref?.();
    };

    /** The first worker of the list the registry gives a slot on, or null. */
    async function claimFirst(list: SlotWorker[]): Promise<SlotWorker | null> {
      for (const w of list) {
        // Earlier claims awaited: the worker may be taken or down by now.
        if (settled || deps.isClosed()) return null;
        if (!isFree(w, deps.perWorker)) continue;
        w.running++;
        const ok = await shared!.claim(w.url, req.jobId);
        if (ok && !settled && !deps.isClosed()) return w;
        if (!ok) {
          // A refusal frees nothing: waking the others would only have them ask again at once.
          w.running--;
          continue;
        }
        // Given up meanwhile (aborted, closed): hand the slot back.
        void shared!.release(w.url, req.jobId).finally(() => {
          w.running--;
          deps.wake();
        });
        return null;
      }
      return null;
    }

    function attempt() {
      if (settled || claiming) return;
      if (signal.aborted) return fail(signal.reason);
      if (deps.isClosed()) return fail(new Error('the worker pool is closed'));
      const choice = candidates(deps, req, !boundPassed && Date.now() < affinityUntil);
      if ('holdFor' in choice) {
        // Nothing wakes a job at its bound (no slot frees then): a timer does, so it takes a free worker.
        bound ??= setTimeout(
          () => {
            boundPassed = true;
            deps.offWake(attempt);
            attempt();
          },
          Math.max(0, affinityUntil - Date.now()),
        );
        (bound as { unref?: () => void }).unref?.();
        return wait();
      }
      const { list } = choice;
      if (!shared) {
        const w = list[0];
        if (!w) return wait();
        w.running++;
        return grant(w);
      }
      if (list.length === 0) return wait();
      claiming = true;
      void claimFirst(list).then((w) => {
        claiming = false;
        if (settled) return;
        if (w) grant(w);
        else if (deps.isClosed()) fail(new Error('the worker pool is closed'));
        else wait();
      });
    }

    const onAbort = () => fail(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    attempt();
  });
}

function slotOn(deps: AcquireDeps, w: SlotWorker, jobId: string): Slot {
  let done = false;
  const free = (shared: 'release' | 'leave') => {
    if (done) return;
    done = true;
    if (deps.shared && shared === 'release') {
      // Free here once the registry has it back: a job of ours woken sooner would find the worker still taken there.
      void deps.shared.release(w.url, jobId).finally(() => {
        w.running--;
        deps.wake();
      });
      return;
    }
    deps.shared?.leave(w.url, jobId);
    w.running--;
    deps.wake();
  };
  return {
    worker: w,
    release: () => free('release'),
    leave: () => free('leave'),
    releaseWhenGone(promptId) {
      // A closed pool checks no more: the shared slot expires on its own.
      // A removed worker is not asked either: its shared slot expires, as its prompt was sent a cancel.
      if (deps.isClosed() || w.removed) free('leave');
      else w.linger(promptId, () => free('release'));
    },
  };
}
