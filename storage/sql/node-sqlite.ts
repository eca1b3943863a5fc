// SQLite storage on node:sqlite (Deno; Node 22.5 and later). Its DatabaseSync
// differs from what kysely's dialect calls in two ways, bridged here:
// statements take parameters spread, not as one array, and do not say whether
// they return rows (`reader`), which `columns()` tells (a statement with
// result columns is read with `all`, anything else with `run`).
import type { SqliteStatement } from 'kysely';
import type { Storage } from '../types.ts';
import { createSqliteStorage, type SqliteDatabaseLike, type SqliteStorageOptions } from './sqlite.ts';

// A variable, so the type checker (Node 20 types, without node:sqlite) does not look for the module.
const NODE_SQLITE: string = 'node:sqlite';

type Params = unknown[];

/** The part of node:sqlite's DatabaseSync used here. */
export interface DatabaseSyncLike {
  prepare(sql: string): {
    all(...params: Params): unknown[];
    run(...params: Params): { changes: number | bigint; lastInsertRowid: number | bigint };
    iterate(...params: Params): IterableIterator<unknown>;
    columns?(): unknown[];
  };
  exec(sql: string): void;
  close(): void;
}

// Only for runtimes whose statements lack columns() (Node 22.5 to 22.15).
const RETURNS_ROWS = /^\s*(select|with|pragma|values|explain)\b|\breturning\b/i;

/** kysely's driver surface over an open DatabaseSync. */
export function fromDatabaseSync(db: DatabaseSyncLike): SqliteDatabaseLike {
  return {
    prepare(sql): SqliteStatement {
      const stmt = db.prepare(sql);
      const reader = typeof stmt.columns === 'function' ? stmt.columns().length > 0 : RETURNS_ROWS.test(sql);
      return {
        reader,
        all: (params) => stmt.all(...params),
        run: (params) => stmt.run(...params),
        iterate: (params) => stmt.iterate(...params),
      };
    },
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}

/** As createSqliteStorage's, but the driver: this one. */
export type NodeSqliteStorageOptions = Pick<SqliteStorageOptions, 'filename' | 'blobs' | 'inlineBlobBytes'>;

/** Opens (creating it if needed) a database file with node:sqlite. */
export async function openNodeSqlite(filename: string): Promise<SqliteDatabaseLike> {
  const { DatabaseSync } = (await import(NODE_SQLITE)) as { DatabaseSync: new (filename: string) => DatabaseSyncLike };
  return fromDatabaseSync(new DatabaseSync(filename));
}

export async function createNodeSqliteStorage(opts: NodeSqliteStorageOptions): Promise<Storage & { close(): Promise<void> }> {
  return createSqliteStorage({ ...opts, database: await openNodeSqlite(opts.filename), open: openNodeSqlite });
}
