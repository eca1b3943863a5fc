// Blob keys locked across every process sharing a storage. An upload that
// finds its bytes already stored attaches a new asset to them, and a
// collection deletes bytes nothing references: on one key the two must not
// interleave, or the new asset ends up over deleted bytes. One process
// orders them with a mutex of its own; processes sharing a database and a
// bucket need the database to order them. Optional: a backend only one
// process uses leaves it out.

export interface BlobLockStore {
  /**
   * Runs `fn` while holding the lock on `key` for every process on the
   * storage, and lets go of it once `fn` settles (whatever it settles to).
   * `fn` must not take another blob lock: holders wait for no one.
   */
  withBlobLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
}
