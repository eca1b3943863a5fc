// The queued jobs' pick order lives in a partial index (jobs_queued_pick_idx,
// migration 0016): (account_id, priority desc, seq) over queued jobs alone.
// A job enters it when submitted and leaves it when claimed; its end and
// every later change of status touch it no more, and it stays as small as
// the queue. A planner uses a partial index only when the query's own WHERE
// implies the index's: SQLite cannot see through a bound parameter, so the
// queries that read the pick order name the status as a literal.
import { type RawBuilder, sql } from 'kysely';

/** `<column> = 'queued'` with the status written into the SQL, as the partial index's WHERE is. */
export const isQueued = (column: 'status' | `${string}.status`): RawBuilder<boolean> => sql<boolean>`${sql.ref(column)} = ${sql.lit('queued')}`;
