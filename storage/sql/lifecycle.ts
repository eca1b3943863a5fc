// StoreLifecycle over kysely: migrations at start, the connection closed once,
// and `select 1` as the ping.
import { type Kysely, sql } from 'kysely';
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
    async ping() {
      // kysely would hand a destroyed pool's query on; say it plainly instead.
      if (closed) throw new Error('the store is closed');
      await sql`select 1`.execute(db);
    },
  };
}
