// How a job gets a slot on one of the pool's workers: the free workers that
// have its node classes, least loaded first; it waits while none is free.
// With shared slots (worker-slots.ts) a worker is taken only once the shared
// registry gives the job a slot there too: each worker is reserved here while
// the registry answers (so this process's other jobs look elsewhere
// meanwhile), and a job the registry turned away everywhere asks again on the
// next wake or after retryMs, since other processes free slots without
// waking us.
import type { PoolWorker, Slot, SlotRequest } from './pool.ts';
import type { SharedSlots } from './worker-slots.ts';

export type SlotWorker = PoolWorker & {
  /** Its health was checked at least once (whatever the answer). */
  probed: boolean;
  linger(promptId: string, release: () => void): void;
};

export interface AcquireDeps {
  workers: readonly SlotWorker[];
  perWorker: number;
  shared?: SharedSlots;
  retryMs: number;
  isClosed(): boolean;
  /** Calls `f` once at the next wake (a slot freed here, a worker answered). */
  onWake(f: () => void): void;
  offWake(f: () => void): void;
  wake(): void;
}

const knows = (w: PoolWorker, classTypes: string[]) => !w.defs || classTypes.every((c) => Object.hasOwn(w.defs!, c));
const isFree = (w: SlotWorker, perWorker: number) => w.healthy && w.lingering.size === 0 && w.running < perWorker;

/** The workers free for the job now, best first. */
export function candidates(deps: AcquireDeps, req: SlotRequest): SlotWorker[] {
  // A job waits for a worker that has its classes (busy or down for now) rather than
  // go to one that would refuse it; only when none has them may any worker try.
  const knowing = deps.workers.filter((w) => knows(w, req.classTypes));
  const eligible = knowing.length > 0 ? knowing : deps.workers;
  const holder = req.prefer ? eligible.find((w) => w.url === req.prefer) : undefined;
  // A re-run on the worker holding its prompt follows that prompt instead of running it again:
  // worth waiting for until that worker's health is known.
  if (holder && !holder.probed) return [];
  const free = eligible.filter((w) => isFree(w, deps.perWorker));
  const others = free.filter((w) => w !== req.avoid);
  const list = others.length > 0 ? others : free;
  // Least loaded first, in the workers' order on ties (the sort is stable); the holder before all.
  return [...list].sort((a, b) => Number(b === holder) - Number(a === holder) || a.running - b.running);
}

export function acquireSlot(deps: AcquireDeps, req: SlotRequest): Promise<Slot> {
  const { shared } = deps;
  const { signal } = req;
  return new Promise((resolve, reject) => {
    let settled = false;
    let claiming = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      settled = true;
      clearTimeout(retry);
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
      const list = candidates(deps, req);
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
      if (deps.isClosed()) free('leave');
      else w.linger(promptId, () => free('release'));
    },
  };
}
