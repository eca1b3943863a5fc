// The embedded default storage: metadata in a SQLite file through kysely,
// small blobs in the same file (inline-blobs.ts), the others in whatever
// BlobStore the caller passes (usually the fs store).
import { Kysely, type SqliteDatabase } from 'kysely';
import type { BlobStore, Storage } from '../types.ts';
import { checkInlineBlobs, openInlineBlobs } from './inline-blobs.ts';
import { createSqlMetadataStore } from './metadata-store.ts';
import { kyselyTransact, type Transact } from './query-template.ts';
import { claimRunnerLock, type OpenSqlite } from './runner-lock.ts';
import type { Database } from './schema.ts';
import { FifoSqliteDialect } from './sqlite-dialect.ts';
import { withStatementCache } from './statement-cache.ts';

/**
 * The driver surface this file needs, declared structurally so better-sqlite3
 * is never a hard dependency: kysely's SqliteDialect calls `prepare(sql)`
 * (statements with `reader`, `all`, `run`, `iterate`) and `close()`; we add
 * `exec(sql)` for the pragmas. better-sqlite3 fits as is; bun:sqlite or
 * node:sqlite need a thin wrapper providing `reader` on statements.
 */
export interface SqliteDatabaseLike extends SqliteDatabase {
  exec(sql: string): unknown;
}

export interface SqliteStorageOptions {
  /** Path of the database file (or ':memory:'); ignored when `database` is given. */
  filename: string;
  blobs: BlobStore;
  /** An open driver to use instead of better-sqlite3. close() closes it too. */
  database?: SqliteDatabaseLike;
  /**
   * Opens another database file with the same driver: the runner lock beside
   * the database (claimRunner). Default better-sqlite3; without it, a store
   * given `database` has no runner lock.
   */
  open?: OpenSqlite;
  /**
   * Blobs of up to this many bytes are kept in the database, not in `blobs`
   * (inline-blobs.ts): a small job output then costs a row, not a durable
   * file. Default 64 KiB, or 0 when `blobs` signs URLs (download redirects
   * need the bytes in the bucket). 0: no more inline blobs; those already in
   * the database stay readable.
   */
  inlineBlobBytes?: number;
}

const openBetterSqlite: OpenSqlite = async (filename) => new (await import('better-sqlite3')).default(filename);

// WAL lets readers run beside the single writer; NORMAL is durable across
// process crashes in WAL mode; busy_timeout waits out another process's write.
// wal_autocheckpoint: the commit that takes the WAL past this many pages
// copies them into the database and syncs both files, on the thread that
// answers requests; at SQLite's 1000 (4 MB) a busy job queue paid that every
// few dozen jobs, about half of its time in SQLite (bench:jobs part 1). 10000
// pages (40 MB of WAL at most) pays it a tenth as often, and each copy writes
// a page changed many times over only once.
const PRAGMAS = ['journal_mode = WAL', 'synchronous = NORMAL', 'foreign_keys = ON', 'busy_timeout = 5000', 'wal_autocheckpoint = 10000'];

/** Past this a blob reads faster from its own file: SQLite's measurements (sqlite.org/intern-v-extern-blob.html) put the turn between 50 and 100 KB at 4 KiB pages. */
export const DEFAULT_INLINE_BLOB_BYTES = 64 * 1024;

export async function createSqliteStorage(opts: SqliteStorageOptions): Promise<Storage & { close(): Promise<void> }> {
  const inlineBytes = opts.inlineBlobBytes ?? (opts.blobs.signedUrl ? 0 : DEFAULT_INLINE_BLOB_BYTES);
  checkInlineBlobs(inlineBytes, opts.blobs);
  // Loaded lazily, so runtimes that inject their own driver never load the native module.
  const open = opts.open ?? (opts.database ? undefined : openBetterSqlite);
  const database = opts.database ?? (await openBetterSqlite(opts.filename));
  // kysely prepares every query anew; the cache reuses statements by SQL text.
  const dialect = new FifoSqliteDialect({ database: withStatementCache(database) });
  // No plugins: rows straight from the driver are what kysely would return.
  const db = new Kysely<Database>({ dialect });
  let releaseRunner: (() => void) | undefined;
  // The hot transactions go straight to the driver once kysely has opened it (the migrations did).
  const viaKysely = kyselyTransact(db);
  const transact: Transact = (fn) => (dialect.open ? dialect.transact(fn) : viaKysely(fn));
  const store = createSqlMetadataStore(db, (sql, parameters) => dialect.readNow(sql, parameters), { transact });
  const metadata: typeof store = {
    ...store,
    commitMark: () => dialect.commitMark(),
    ...(open && {
      async claimRunner() {
        releaseRunner ??= await claimRunnerLock(opts.filename, open);
      },
    }),
    async close() {
      releaseRunner?.();
      releaseRunner = undefined;
      await store.close();
    },
  };
  let blobs: BlobStore;
  try {
    for (const pragma of PRAGMAS) database.exec(`PRAGMA ${pragma}`);
    await metadata.migrate();
    blobs = await openInlineBlobs(db, opts.blobs, { maxBytes: inlineBytes, readNow: (sql, parameters) => dialect.readNow(sql, parameters) });
  } catch (err) {
    // kysely closes the driver only once it has used it; close it ourselves otherwise.
    await metadata.close().catch(() => {});
    try {
      database.close();
    } catch {
      // already closed by kysely
    }
    throw err;
  }
  return {
    metadata,
    blobs,
    async close() {
      await metadata.close();
      await opts.blobs.close?.();
    },
  };
}
