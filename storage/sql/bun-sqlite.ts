// SQLite storage on Bun's built-in driver. bun:sqlite's Database already has
// the surface kysely's dialect needs (statements with `reader`, `all(params)`,
// `run(params)` returning changes and lastInsertRowid, `iterate`), so it is
// handed to createSqliteStorage as it is, in place of better-sqlite3.
import type { Storage } from '../types.ts';
import { createSqliteStorage, type SqliteDatabaseLike, type SqliteStorageOptions } from './sqlite.ts';

// A variable, so the type checker (running under Node) does not look for the module.
const BUN_SQLITE: string = 'bun:sqlite';

/** As createSqliteStorage's, but the driver: this one. */
export type BunSqliteStorageOptions = Pick<SqliteStorageOptions, 'filename' | 'blobs' | 'inlineBlobBytes'>;

/** Opens (creating it if needed) a database file with bun:sqlite. Bun only. */
export async function openBunSqlite(filename: string): Promise<SqliteDatabaseLike> {
  const { Database } = (await import(BUN_SQLITE)) as { Database: new (filename: string, options: { create: boolean }) => SqliteDatabaseLike };
  return new Database(filename, { create: true });
}

export async function createBunSqliteStorage(opts: BunSqliteStorageOptions): Promise<Storage & { close(): Promise<void> }> {
  return createSqliteStorage({ ...opts, database: await openBunSqlite(opts.filename), open: openBunSqlite });
}
