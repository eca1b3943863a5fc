// StoreLifecycle over kysely: migrations at start, the connection closed once.
import type { Kysely } from 'kysely';
import type { StoreLifecycle } from '../types.ts';
import { migrateToLatest } from './migrations.ts';
import type { Database } from './schema.ts';

export function createSqlLifecycle(db: Kysely<Database>): StoreLifecycle {
  let closed = false;
  return {
    migrate: () => migrateToLatest(db),
    async close() {
      // createService and the storage's own close() may both close it.
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
