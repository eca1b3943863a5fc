// The scale-out storage: metadata in PostgreSQL through kysely's
// PostgresDialect, blobs in whatever BlobStore the caller passes. The stores
// are SQLite's (metadata-store.ts: one schema, dialect-neutral SQL); what is
// PostgreSQL's own is the connection pool and the runner lock.
//
// int8 columns come back from `pg` as strings: the rows are converted where
// they are read (rows.ts, toNumber), the one path every dialect and every
// pool goes through. Setting a type parser instead would be global to `pg`
// (pg.types) or differ between our pool and an injected one.
import { Kysely, PostgresDialect } from 'kysely';
import type { BlobStore, Storage } from '../types.ts';
import { createSqlMetadataStore } from './metadata-store.ts';
import { migrateToLatest } from './migrations.ts';
import { openPgPool, type PgPoolLike } from './pg-pool.ts';
import { claimPgRunnerLock } from './pg-runner-lock.ts';
import type { Database } from './schema.ts';

export type { PgPoolClientLike, PgPoolLike } from './pg-pool.ts';

export interface PostgresStorageOptions {
  /** A pg Pool (or one like it) to use; close() ends it too. Takes precedence over `connectionString`. */
  pool?: PgPoolLike;
  /** `postgres://user:password@host:port/database`: a pool is opened with `pg` (which must then be installed). */
  connectionString?: string;
  blobs: BlobStore;
  /**
   * The PostgreSQL schema the tables (and the migrations' bookkeeping) live
   * in, created if absent; default: unqualified names, the connection's
   * search_path (usually `public`).
   */
  schema?: string;
}

export async function createPostgresStorage(opts: PostgresStorageOptions): Promise<Storage & { close(): Promise<void> }> {
  if (!opts.pool && !opts.connectionString) throw new TypeError('createPostgresStorage: give `pool` or `connectionString`');
  const pool = opts.pool ?? (await openPgPool(opts.connectionString!));
  const schema = opts.schema ?? null;
  const base = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const db = schema === null ? base : base.withSchema(schema);
  let releaseRunner: (() => void) | undefined;
  const store = createSqlMetadataStore(db, undefined, { rowLocks: true });
  const metadata: typeof store = {
    ...store,
    migrate: () => migrateToLatest(db, schema ?? undefined),
    async claimRunner() {
      releaseRunner ??= await claimPgRunnerLock(pool, schema);
    },
    async close() {
      // First: the pool's end() waits for the lock's connection to come back.
      releaseRunner?.();
      releaseRunner = undefined;
      await store.close();
    },
  };
  try {
    await metadata.migrate();
  } catch (err) {
    await metadata.close().catch(() => {});
    throw err;
  }
  return {
    metadata,
    blobs: opts.blobs,
    async close() {
      await metadata.close();
      await opts.blobs.close?.();
    },
  };
}
