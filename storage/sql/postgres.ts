// The scale-out storage: metadata in PostgreSQL through kysely's
// PostgresDialect, blobs in whatever BlobStore the caller passes. The stores
// are SQLite's (metadata-store.ts: one schema, dialect-neutral SQL); what is
// PostgreSQL's own is the connection pool and, for an operator who wants one
// job runner only, the runner lock. By default any number of runners share
// the database: each holds the jobs it runs under a lease (JobStore.claimJob).
//
// int8 columns come back from `pg` as strings: the rows are converted where
// they are read (rows.ts, toNumber), the one path every dialect and every
// pool goes through. Setting a type parser instead would be global to `pg`
// (pg.types) or differ between our pool and an injected one.
import { Kysely, PostgresDialect } from 'kysely';
import type { BlobStore, Storage } from '../types.ts';
import { createSqlMetadataStore } from './metadata-store.ts';
import { migrateToLatest } from './migrations.ts';
import { createPgEventBus, type PgEventBus, type PgEventBusOptions, type PgListenClientLike } from './pg-event-bus.ts';
import { openPgPool, type PgPoolLike } from './pg-pool.ts';
import { claimPgRunnerLock } from './pg-runner-lock.ts';
import type { Database } from './schema.ts';

export type { PgEventBus, PgEventBusStats } from './pg-event-bus.ts';
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
  /**
   * One job-running process per database (claimRunner: an advisory lock; a
   * second runner gets RunnerLockError), which then settles every job a
   * crash left running as soon as it starts. Default false: several runners
   * share the database and take back only jobs whose lease expired.
   */
  exclusiveRunner?: boolean;
  /**
   * The event bus (`storage.events`: job events reach every instance on the
   * database), with its tuning; `false` for none. It holds one connection of
   * the pool once anything listens.
   */
  events?: false | Pick<PgEventBusOptions, 'spillTtlMs' | 'maxPayloadBytes' | 'probeIntervalMs'>;
}

/** A pool client to LISTEN on; a pool whose clients emit no events cannot serve. */
async function listenClient(pool: PgPoolLike): Promise<PgListenClientLike> {
  const client = await pool.connect();
  if (typeof client.on !== 'function') {
    client.release();
    throw new TypeError("createPostgresStorage: the pool's clients have no on(), so they cannot LISTEN (pass events: false)");
  }
  return client as unknown as PgListenClientLike;
}

export async function createPostgresStorage(opts: PostgresStorageOptions): Promise<Storage & { events?: PgEventBus; close(): Promise<void> }> {
  if (!opts.pool && !opts.connectionString) throw new TypeError('createPostgresStorage: give `pool` or `connectionString`');
  const pool = opts.pool ?? (await openPgPool(opts.connectionString!));
  const schema = opts.schema ?? null;
  const base = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const db = schema === null ? base : base.withSchema(schema);
  let releaseRunner: (() => void) | undefined;
  const events = opts.events === false ? undefined : createPgEventBus({ ...opts.events, db, schema, connect: () => listenClient(pool) });
  const store = createSqlMetadataStore(db, undefined, { rowLocks: true });
  const metadata: typeof store = {
    ...store,
    migrate: () => migrateToLatest(db, schema ?? undefined),
    ...(opts.exclusiveRunner && {
      async claimRunner() {
        releaseRunner ??= await claimPgRunnerLock(pool, schema);
      },
    }),
    async close() {
      // First: the pool's end() waits for the lock's and the bus's connections to come back.
      await events?.close();
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
    ...(events && { events }),
    async close() {
      await metadata.close();
      await opts.blobs.close?.();
    },
  };
}
