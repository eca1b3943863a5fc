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
  /** pg's settings, read for `max` (how many connections the pool opens at most) where known. */
  readonly options?: { readonly max?: number };
}

/** A pg Pool over `connectionString`, of at most `max` connections (default pg's, 10); `pg` is loaded only here. */
export async function openPgPool(connectionString: string, max?: number): Promise<PgPoolLike> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString, ...(max !== undefined && { max }) });
  // An idle connection the server drops emits 'error' on the pool, which
  // unheard would end the process; pg has already discarded that connection,
  // and the next query opens a new one.
  pool.on('error', () => {});
  // So does a connection a query holds when the server ends it (a restart, a
  // failover): the query's promise rejects with the error, and the client's
  // own 'error' event, unheard, would end the process too.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
