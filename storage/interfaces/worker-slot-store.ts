// Slots on engine servers ("workers") that several processes share: each
// process's worker engine claims a slot here before it gives a worker a
// prompt, so processes configured with the same workers never give one
// worker more prompts at once than its capacity. A slot is held under a
// lease its holder renews while the prompt runs; a process that dies stops
// renewing, and its slots free themselves once their lease expires.
//
// A slot is named by its worker and the job whose prompt it runs, so a
// job's re-run (another process took the job back) takes over the slot its
// prompt already holds rather than needing a second one, and can ask which
// worker that is (holder).

/** What claim needs: the worker, how many prompts it takes at once, the job, and the lease to take. */
export interface WorkerSlotClaim {
  /** The worker's base URL, as every process names it. */
  worker: string;
  /** At most this many live slots on the worker (the claimer's per-worker limit). */
  capacity: number;
  job_id: string;
  /** Who holds the slot: an engine's id, unique per process. */
  owner: string;
  /** Epoch ms. */
  now: number;
  /** How long the slot lasts unless renewed. */
  lease_ms: number;
}

/** A slot held by `owner`: which worker, which job. */
export interface WorkerSlotKey {
  worker: string;
  job_id: string;
  owner: string;
}

export interface WorkerSlotStore {
  /**
   * Atomically, as one step for every process sharing the store: drops the
   * worker's expired slots, then takes the job's slot on it if the worker
   * has fewer than `capacity` live slots of other jobs. The job's own slot
   * (held by anyone) does not count and is taken over: a re-run continues
   * the prompt its job already has there. False when the worker is full.
   */
  claim(claim: WorkerSlotClaim): Promise<boolean>;
  /** Extends the owner's live slot to `until`; false when it is no longer the owner's or has expired. */
  renew(slot: WorkerSlotKey & { now: number; until: number }): Promise<boolean>;
  /** Frees the slot if `owner` still holds it (a slot another process took over stays). */
  release(slot: WorkerSlotKey): Promise<void>;
  /**
   * The worker holding (or that held, while its expired slot is still
   * stored) the job's slot; null when none does. The most recently renewed
   * one if there are several.
   */
  holder(jobId: string): Promise<string | null>;
}
