// One job-running process per SQLite database. Two runners on one file would
// both recover the "running" jobs a crash left and run them twice, and
// scheduling counts only its own process's jobs. The lock is an exclusive
// SQLite transaction held open on a file beside the database: the operating
// system lets go of it when the process ends, however it ends, so a restart
// after a crash never waits for a lease to run out.
import { RunnerLockError } from '../interfaces/lifecycle.ts';
import type { SqliteDatabaseLike } from './sqlite.ts';

/** Opens (creating it if needed) a database file with the storage's own driver. */
export type OpenSqlite = (filename: string) => Promise<SqliteDatabaseLike>;

const isBusy = (err: unknown) =>
  /SQLITE_BUSY|database is locked/i.test(`${(err as { code?: unknown })?.code ?? ''} ${(err as Error)?.message ?? ''}`);

/** Takes the lock of `filename`'s runner, or throws RunnerLockError; the function returned lets go of it. */
export async function claimRunnerLock(filename: string, open: OpenSqlite): Promise<() => void> {
  // An in-memory database belongs to this process alone.
  if (filename === '' || filename === ':memory:' || filename.startsWith('file::memory:')) return () => {};
  const path = `${filename}-runner.lock`;
  const lock = await open(path);
  try {
    // Fail at once rather than wait: the holder keeps it for its whole life.
    lock.exec('PRAGMA busy_timeout = 0');
    lock.exec('PRAGMA locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if (!isBusy(err)) throw err;
    throw new RunnerLockError(
      `Another process runs jobs on the SQLite database ${filename} (it holds ${path}): only one may. ` +
        'Stop it first, or start this one with runJobs: false to serve the API only beside it.',
    );
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    lock.close();
  };
}
