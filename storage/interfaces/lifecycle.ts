// What every metadata backend does once per process, whatever it stores:
// bring its schema up to date at start, let go of its connections at the end,
// and, where only one process may run jobs on it, take that place.

export interface StoreLifecycle {
  /** Creates or upgrades the schema. Safe to call on every start. */
  migrate(): Promise<void>;
  /** Releases the backend's resources; safe to call more than once. */
  close(): Promise<void>;
  /**
   * The cheapest round trip to the backend (readiness probes): resolves
   * when it answers, rejects when it cannot (unreachable, closed). Callers
   * bound the wait themselves.
   */
  ping(): Promise<void>;
  /**
   * Makes this process the storage's one job runner, for a backend that only
   * one process may run jobs on (SQLite, PostgreSQL): throws RunnerLockError while
   * another live process holds that place; close() gives it up. Backends
   * shared by design, and memory, leave it out.
   */
  claimRunner?(): Promise<void>;
}

/** Another live process already runs the jobs of this storage (StoreLifecycle.claimRunner). */
export class RunnerLockError extends Error {
  override name = 'RunnerLockError';
}
