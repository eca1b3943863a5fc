// A better-sqlite3 database that records the SQL of every statement it runs,
// in order: for tests that assert which reads and writes a request made, and
// (with the parameters of each run) for tests that ask SQLite for a plan.
import Database from 'better-sqlite3';

export interface Run {
  sql: string;
  parameters: unknown[];
}

export function recordingDatabase(filename: string): { db: Database.Database; ran: string[]; runs: Run[] } {
  const db = new Database(filename);
  const ran: string[] = [];
  const runs: Run[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    for (const method of ['run', 'all', 'get', 'iterate'] as const) {
      const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        ran.push(sql);
        runs.push({ sql, parameters: args.flat() });
        return original(...args);
      };
    }
    return statement;
  }) as typeof db.prepare;
  return { db, ran, runs };
}

/** SQLite's plan for `run`, one line per step (EXPLAIN QUERY PLAN's details). */
export const planOf = (db: Database.Database, { sql, parameters }: Run): string[] =>
  db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...parameters)
    .map((row) => (row as { detail: string }).detail);
