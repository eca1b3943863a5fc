// A bounded LRU of prepared statements in front of a SQLite driver. kysely's
// SqliteDialect calls `prepare(sql)` for every query, and preparing costs
// more than running a small indexed read; statements are reusable, so the
// same SQL text gets the same statement back.
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct SQL texts kept; `IN (?, ?, ...)` lists of every length make the set open-ended. */
export const DEFAULT_STATEMENT_CACHE_SIZE = 256;

/**
 * The driver as kysely sees it (`prepare` and `close`), with `prepare` going
 * through the cache. Closing clears the cache: the driver finalises every
 * statement when it closes.
 */
export function withStatementCache(
  database: SqliteDatabase,
  size = DEFAULT_STATEMENT_CACHE_SIZE,
): SqliteDatabase & { readonly inTransaction: boolean | undefined } {
  const cache = new Map<string, SqliteStatement>();
  return {
    // Passed through when the driver has it (better-sqlite3): the dialect's group commit needs it.
    get inTransaction() {
      return (database as { inTransaction?: boolean }).inTransaction;
    },
    prepare(sql) {
      const hit = cache.get(sql);
      if (hit !== undefined) {
        // A statement still being iterated (a kysely stream) cannot run again
        // until it finishes (better-sqlite3 throws "busy"): use a fresh one.
        if ((hit as { busy?: boolean }).busy === true) return database.prepare(sql);
        // Most recently used last: a Map keeps insertion order.
        cache.delete(sql);
        cache.set(sql, hit);
        return hit;
      }
      const stmt = database.prepare(sql);
      if (size > 0) {
        cache.set(sql, stmt);
        if (cache.size > size) cache.delete(cache.keys().next().value!);
      }
      return stmt;
    },
    close() {
      cache.clear();
      database.close();
    },
  };
}
