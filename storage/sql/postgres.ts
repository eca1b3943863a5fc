// The scale-out storage: metadata in PostgreSQL through kysely's
// PostgresDialect, blobs in whatever BlobStore the caller passes. The stores
// are SQLite's (metadata-store.ts: one schema, dialect-neutral SQL); what is
// PostgreSQL's own is the connection pool, the blob-key locks the instances
// sharing the database take (pg-blob-locks.ts) and, for an operator who wants
// one job runner only, the runner lock. By default any number of runners
// share the database: each holds the jobs it runs under a lease
// (JobStore.claimJob).
//
// int8 columns come back from `pg` as strings: the rows are converted where
// they are read (rows.ts, toNumber), the one path every dialect and every
// pool goes through. Setting a type parser instead would be global to `pg`
// (pg.types) or differ between our pool and an injected one.
import { Kysely, PostgresDialect } from 'kysely';
import type { BlobStore, Storage } from '../types.ts';
import { createSqlMetadataStore } from './metadata-store.ts';
import { migrateToLatest } from './migrations.ts';
import { createPgBlobLocks } from './pg-blob-locks.ts';
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
  /**
   * Blob keys locked across the instances on the database
   * (metadata.blobLocks), so that an upload reusing stored bytes on one
   * instance and the collection of those bytes on another take turns. Each
   * lock holds a session of its own while its holder works on the main pool,
   * at most `connections` (default 4) at once. Opened from
   * `connectionString`, they have a pool of their own; with an injected
   * `pool`, they come from `blobLocks.pool` when given (close() ends it too),
   * else from that pool, which must then open more connections than these,
   * the event bus's and the runner lock's together (pg's default of 10 does;
   * a smaller `options.max` is refused). `false`: none, for a database one
   * instance uses alone or instances that share no blobs.
   */
  blobLocks?: false | { connections?: number; pool?: PgPoolLike };
}

const BLOB_LOCK_CONNECTIONS = 4;

/** Where the blob locks' sessions come from: a pool of their own when we can, the main one when it is large enough. */
async function blobLockPool(opts: PostgresStorageOptions, connections: number): Promise<{ pool: PgPoolLike; own: boolean } | undefined> {
  if (opts.blobLocks === false) return undefined;
  if (opts.blobLocks?.pool) return { pool: opts.blobLocks.pool, own: true };
  if (!opts.pool) return { pool: await openPgPool(opts.connectionString!, connections), own: true };
  // Holders keep their sessions while their work waits for the pool: it needs one more besides.
  const needed = connections + (opts.events === false ? 0 : 1) + (opts.exclusiveRunner ? 1 : 0) + 1;
  const max = opts.pool.options?.max;
  if (max !== undefined && max < needed) {
    throw new TypeError(
      `createPostgresStorage: the pool opens at most ${max} connections, and the blob locks (${connections}) with the rest need ${needed}: ` +
        'give blobLocks a pool of its own, fewer blobLocks.connections, or a larger pool',
    );
  }
  return { pool: opts.pool, own: false };
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
  const connections = (opts.blobLocks || undefined)?.connections ?? BLOB_LOCK_CONNECTIONS;
  if (!(Number.isInteger(connections) && connections > 0))
    throw new TypeError('createPostgresStorage: blobLocks.connections must be a positive integer');
  const pool = opts.pool ?? (await openPgPool(opts.connectionString!));
  // After the main pool: only a storage opened from a URL opens this one, and pg loaded for that.
  const locks = await blobLockPool(opts, connections);
  let locksOpen = locks?.own === true;
  const schema = opts.schema ?? null;
  const base = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const db = schema === null ? base : base.withSchema(schema);
  let releaseRunner: (() => void) | undefined;
  const events = opts.events === false ? undefined : createPgEventBus({ ...opts.events, db, schema, connect: () => listenClient(pool) });
  const store = createSqlMetadataStore(db, undefined, { rowLocks: true });
  const metadata: typeof store = {
    ...store,
    migrate: () => migrateToLatest(db, schema ?? undefined),
    ...(locks && { blobLocks: createPgBlobLocks({ pool: locks.pool, schema, connections }) }),
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
      if (locks && locksOpen) {
        locksOpen = false;
        await locks.pool.end();
      }
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
