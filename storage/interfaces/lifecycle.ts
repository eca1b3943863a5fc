// What every metadata backend does once per process, whatever it stores:
// bring its schema up to date at start, let go of its connections at the end.

export interface StoreLifecycle {
  /** Creates or upgrades the schema. Safe to call on every start. */
  migrate(): Promise<void>;
  /** Releases the backend's resources; safe to call more than once. */
  close(): Promise<void>;
}
