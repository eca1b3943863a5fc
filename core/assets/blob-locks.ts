// The lock every commit and every collection of one blob key takes. In
// process always (KeyedMutex), so this process's own work on a key queues
// here and holds at most one of the storage's lock sessions per key; across
// processes too when the storage offers it (MetadataStore.blobLocks), since
// instances sharing a database and a bucket would otherwise let an upload
// that reuses stored bytes record its asset while another instance deletes
// those bytes.
import type { BlobLockStore } from '../../storage/types.ts';
import { KeyedMutex } from '../keyed-mutex.ts';

export interface BlobLocks {
  /** Runs `fn` holding the key's lock; `fn` must take no other blob lock. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

export function createBlobLocks(shared: BlobLockStore | undefined): BlobLocks {
  const local = new KeyedMutex();
  if (!shared) return local;
  return { run: (key, fn) => local.run(key, () => shared.withBlobLock(key, fn)) };
}
