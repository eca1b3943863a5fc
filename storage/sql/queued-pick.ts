// The queued jobs' pick order lives in a partial index (jobs_queued_pick_idx,
// migration 0016): (account_id, priority desc, seq) over queued jobs alone.
// A job is in it while queued: it enters at submission (or when put back in
// the queue) and leaves when claimed or canceled; its end and every later
// change of status touch it no more, and it stays as small as the queue. A planner uses a partial index only when the query's own WHERE
// implies the index's, so the queries that read the pick order name the
// status as a literal. With a bound parameter there, SQLite checks its value
// by compiling the statement anew on every run (a pick in a loop: 4.9 µs
// against 0.4 µs), and a generic plan of PostgreSQL's cannot use the index.
import { type RawBuilder, sql } from 'kysely';

/** `<column> = 'queued'` with the status written into the SQL, as the partial index's WHERE is. */
export const isQueued = (column: 'status' | `${string}.status`): RawBuilder<boolean> => sql<boolean>`${sql.ref(column)} = ${sql.lit('queued')}`;
