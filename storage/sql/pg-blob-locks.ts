// Blob keys locked across every process on one PostgreSQL database and
// schema (BlobLockStore): a session-level advisory lock per key, held on a
// connection of its own while the holder works through the main pool. A
// session lock, not a transaction's: the holder's work is several statements
// and blob-store calls, committed on the main pool as it goes, which one
// transaction on the lock's connection could not hold.
//
// The lock is the two-key form: a namespace of its own (the runner lock's is
// another, so neither ever waits on the other) and a hash of the schema and
// the blob key. Two keys hashing alike only share a lock, one waiting
// briefly for the other; holders take no second blob lock, so that never
// deadlocks.
//
// Every holder keeps its session while its work waits for connections of
// the main pool; so at most `connections` sessions are open at once, and the
// rest wait here, holding nothing. From a pool of their own, holders can
// never take the connections their work needs; from the main pool, only if
// it has more than `connections` (postgres.ts checks what it can).
import type { BlobLockStore } from '../interfaces/blob-lock-store.ts';
import type { PgPoolClientLike, PgPoolLike } from './pg-pool.ts';

/** The first key of the two-key lock form: "graphrun blob". */
const LOCK_NAMESPACE = 0x67726e62;

const LOCK = "select s.k, pg_advisory_lock($1, s.k) from (select hashtext(coalesce($2::text, current_schema(), '') || '/' || $3::text) as k) s";
const UNLOCK = 'select pg_advisory_unlock($1, $2)';

export interface PgBlobLockOptions {
  /** Where the lock sessions come from. */
  pool: PgPoolLike;
  /** The storage's schema; null: the connection's current one. */
  schema: string | null;
  /** Sessions open at once, at most. */
  connections: number;
}

/** Counts out `n` places; a waiter holds nothing until its turn. */
function places(n: number) {
  let free = n;
  const waiting: Array<() => void> = [];
  return {
    async take(): Promise<void> {
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
    },
    give(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

export function createPgBlobLocks({ pool, schema, connections }: PgBlobLockOptions): BlobLockStore {
  const sessions = places(connections);
  // A pooled client is the same object each time it is checked out: one listener each, ever.
  const heard = new WeakSet<PgPoolClientLike>();
  return {
    async withBlobLock(key, fn) {
      await sessions.take();
      try {
        const client = await pool.connect();
        if (!heard.has(client)) {
          // A checked-out pg client that loses its connection emits 'error', which unheard
          // would end the process; the lock is gone with the session, and the unlock below fails.
          client.on?.('error', () => {});
          heard.add(client);
        }
        let lock: number;
        try {
          const { rows } = await client.query<{ k: number }>(LOCK, [LOCK_NAMESPACE, schema, key]);
          lock = rows[0]!.k;
        } catch (err) {
          client.release(true);
          throw err;
        }
        try {
          return await fn();
        } finally {
          // A session whose unlock failed is closed instead: that lets go of its locks whatever its state.
          await client.query(UNLOCK, [LOCK_NAMESPACE, lock]).then(
            () => client.release(),
            () => client.release(true),
          );
        }
      } finally {
        sessions.give();
      }
    },
  };
}
