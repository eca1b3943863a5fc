// Worker slots shared with the engines of other processes that use the same
// workers. Each process's pool counts only its own jobs, so before it gives a
// worker a prompt it claims a slot in a registry they all share (the
// database: storage's `metadata.workerSlots`), which holds at most the
// worker's capacity at once. Claimed slots are renewed while their prompt
// runs, so the slots of a process that died free themselves when their lease
// runs out. The registry is a structural type: the engine needs no storage.

/** What the engine asks of the shared registry (storage/interfaces/worker-slot-store.ts says what each promises). */
export interface WorkerSlotRegistry {
  claim(claim: { worker: string; capacity: number; job_id: string; owner: string; now: number; lease_ms: number }): Promise<boolean>;
  renew(slot: { worker: string; job_id: string; owner: string; now: number; until: number }): Promise<boolean>;
  release(slot: { worker: string; job_id: string; owner: string }): Promise<void>;
  holder(jobId: string): Promise<string | null>;
}

export interface SharedSlotsOptions {
  registry: WorkerSlotRegistry;
  /** This engine's id: the owner of the slots it claims. */
  owner: string;
  /** Prompts a worker takes at once. */
  capacity: number;
  /** How long a slot lasts unless renewed; renewed every quarter of it. */
  leaseMs: number;
  log(message: string, detail?: Record<string, unknown>): void;
}

export interface SharedSlots {
  /** Takes the job's slot on the worker; false while the worker is full (or the registry failed). */
  claim(worker: string, jobId: string): Promise<boolean>;
  /** Gives the slot back; settles once the registry has it. */
  release(worker: string, jobId: string): Promise<void>;
  /** Stops renewing the slot, which then expires, unless the job's re-run takes it over first: its prompt goes on without us. */
  leave(worker: string, jobId: string): void;
  /** The worker that holds (or held) the job's prompt, or null; null too when the registry fails. */
  holder(jobId: string): Promise<string | null>;
  close(): void;
}

export function createSharedSlots(opts: SharedSlotsOptions): SharedSlots {
  const { registry, owner, capacity, leaseMs, log } = opts;
  const held = new Map<string, { worker: string; job_id: string }>();
  const keyOf = (worker: string, jobId: string) => JSON.stringify([worker, jobId]);
  let timer: ReturnType<typeof setInterval> | undefined;
  // One line per outage, not one per retry of every waiting job.
  let failing = false;
  const failed = (what: string, err: unknown, detail: Record<string, unknown>) => {
    if (!failing) log(`worker slots: ${what} failed`, { ...detail, error: err instanceof Error ? err.message : String(err) });
    failing = true;
  };

  function renewAll(): void {
    const now = Date.now();
    for (const [key, slot] of held) {
      registry.renew({ ...slot, owner, now, until: now + leaseMs }).then(
        (ok) => {
          failing = false;
          // Expired (this process stalled past its lease) or taken over by the job's re-run elsewhere.
          if (ok || held.get(key) !== slot) return;
          held.delete(key);
          log('worker slot lost: its lease ran out or another process took it over', slot);
        },
        (err) => failed('renewal', err, slot),
      );
    }
  }

  function track(): void {
    if (held.size > 0 && timer === undefined) {
      timer = setInterval(renewAll, Math.max(1, Math.floor(leaseMs / 4)));
      (timer as { unref?: () => void }).unref?.();
    } else if (held.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  return {
    async claim(worker, jobId) {
      try {
        const ok = await registry.claim({ worker, capacity, job_id: jobId, owner, now: Date.now(), lease_ms: leaseMs });
        failing = false;
        if (ok) held.set(keyOf(worker, jobId), { worker, job_id: jobId });
        track();
        return ok;
      } catch (err) {
        failed('a claim', err, { worker, job_id: jobId });
        return false;
      }
    },
    async release(worker, jobId) {
      held.delete(keyOf(worker, jobId));
      track();
      // A release that fails leaves the slot to expire.
      await registry.release({ worker, job_id: jobId, owner }).catch((err) => failed('a release', err, { worker, job_id: jobId }));
    },
    leave(worker, jobId) {
      held.delete(keyOf(worker, jobId));
      track();
    },
    async holder(jobId) {
      return registry.holder(jobId).catch((err) => {
        failed('asking for the worker of a job', err, { job_id: jobId });
        return null;
      });
    },
    close() {
      held.clear();
      track();
    },
  };
}
