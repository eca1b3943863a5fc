// The part of node-postgres (`pg`) the PostgreSQL storage uses, declared
// structurally so `pg` is never a hard dependency: a caller may inject a
// pool of its own (any pg 8 Pool fits as is), and only a storage opened from
// a connection string loads `pg`, lazily, as sqlite.ts loads better-sqlite3.
import type { PostgresPool, PostgresPoolClient } from 'kysely';

/** A client checked out of the pool: kysely's surface, plus what the runner lock needs. */
export interface PgPoolClientLike extends PostgresPoolClient {
  /** pg's release: `true` closes the connection (and its session) instead of returning it to the pool. */
  release(destroy?: boolean): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
}

/** What kysely's PostgresDialect calls (`connect`, `end`), with clients as above. */
export interface PgPoolLike extends PostgresPool {
  connect(): Promise<PgPoolClientLike>;
}

/** A pg Pool over `connectionString`; `pg` is loaded only here. */
export async function openPgPool(connectionString: string): Promise<PgPoolLike> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString });
  // An idle connection the server drops emits 'error' on the pool, which
  // unheard would end the process; pg has already discarded that connection,
  // and the next query opens a new one.
  pool.on('error', () => {});
  return pool;
}
