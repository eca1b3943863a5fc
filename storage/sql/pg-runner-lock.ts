// One job-running process per PostgreSQL database and schema, as SQLite has
// per file (runner-lock.ts): two runners would both recover the "running"
// jobs a crash left and run them twice, and scheduling counts only its own
// process's jobs. The place is a session-level advisory lock held on a
// connection of its own for the runner's whole life: PostgreSQL lets go of it
// when that session ends, however the process ends, so a restart after a
// crash never waits for a lease to run out.
//
// Several runners sharing one database need leases on the jobs themselves
// (who runs which job, until when); until the job store has them, this lock
// keeps it to one runner, and API-only instances (runJobs: false) beside it.
import { RunnerLockError } from '../interfaces/lifecycle.ts';
import type { PgPoolLike } from './pg-pool.ts';

/** The first key of the two-key lock form: "graphrun runner", so other applications' locks on the database never collide with ours. */
const LOCK_NAMESPACE = 0x67726e72;

/**
 * Takes the runner's place on `schema` (null: the connection's current
 * schema, where unqualified tables live), or throws RunnerLockError; the
 * function returned lets go of it.
 */
export async function claimPgRunnerLock(pool: PgPoolLike, schema: string | null): Promise<() => void> {
  const client = await pool.connect();
  let row: { locked: boolean | null; schema: string } | undefined;
  try {
    const result = await client.query<NonNullable<typeof row>>(
      "select pg_try_advisory_lock($1, hashtext(s.name)) as locked, s.name as schema from (select coalesce($2::text, current_schema(), '') as name) s",
      [LOCK_NAMESPACE, schema],
    );
    row = result.rows[0];
  } catch (err) {
    client.release(true);
    throw err;
  }
  if (row?.locked !== true) {
    client.release();
    throw new RunnerLockError(
      `Another process runs jobs on this PostgreSQL database (schema "${row?.schema ?? schema}"): only one may. ` +
        'Stop it first, or start this one with runJobs: false to serve the API only beside it.',
    );
  }
  // A checked-out pg client that loses its connection emits 'error', which
  // unheard would end the process. The lock is gone with the session then;
  // noticing that and stepping down is the leasing step's work.
  client.on?.('error', () => {});
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    // Closing the session drops its advisory locks, whatever state the connection is in.
    client.release(true);
  };
}
