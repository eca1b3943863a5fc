// A better-sqlite3 database that records the SQL of every statement it runs,
// in order: for tests that assert which reads and writes a request made.
import Database from 'better-sqlite3';

export function recordingDatabase(filename: string): { db: Database.Database; ran: string[] } {
  const db = new Database(filename);
  const ran: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    for (const method of ['run', 'all', 'get', 'iterate'] as const) {
      const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        ran.push(sql);
        return original(...args);
      };
    }
    return statement;
  }) as typeof db.prepare;
  return { db, ran };
}
