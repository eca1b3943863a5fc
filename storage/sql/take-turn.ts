// Serialises one kind of write across every process sharing the database:
// the transaction bumps a `counters` row of its own name first. The update
// locks that row (PostgreSQL) or the database (SQLite) until the transaction
// commits, so a later transaction of the same name reads everything an
// earlier one wrote (PostgreSQL's READ COMMITTED reads each statement anew),
// while other names do not wait. Used where a count and the insert or update
// it allows must be one step: an account's job claims on PostgreSQL (SQLite's
// is one UPDATE, job-claim.ts), an engine server's slots.
import type { Kysely, Transaction } from 'kysely';
import { type Executor, statementTemplate } from './query-template.ts';
import type { Database } from './schema.ts';

const turn = (db: Kysely<Database>, name: string) =>
  db
    .insertInto('counters')
    .values({ name, value: 0 })
    .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb.ref('counters.value') })));

/** The row's value is left as it was (0 when new): the caller may keep something there. */
export async function takeTurn(tx: Transaction<Database> | Kysely<Database>, name: string): Promise<void> {
  await turn(tx, name).execute();
}

/** takeTurn compiled once (query-template.ts), for a hot caller: every job claim takes one. */
export function compiledTakeTurn(db: Kysely<Database>): (tx: Executor, name: string) => Promise<void> {
  const run = statementTemplate(1, (name: string) => turn(db, name));
  return async (tx, name) => {
    await run(tx, name);
  };
}
