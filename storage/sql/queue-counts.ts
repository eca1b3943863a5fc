// The `queue_counts` table: each account's number of queued jobs, changed in
// the transaction of every move into or out of `queued` (an insert, a claim,
// a transition), so the queue's size, the bounds and the accounts with queued
// jobs are read from a few rows instead of counting the queue; at a depth of
// thousands those counts cost more than the rest of a submission.
import type { Kysely } from 'kysely';
import { type Database, toNumber } from './schema.ts';

const QUEUED = 'queued';

/** +1 / -1 for a move from `from` to `to`, 0 when it neither enters nor leaves the queue. */
export const queueDelta = (from: string | null, to: string): number => (to === QUEUED ? 1 : 0) - (from === QUEUED ? 1 : 0);

/** Adds `delta` to the account's count, in the caller's transaction. */
export async function adjustQueued(db: Kysely<Database>, accountId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  await db
    .insertInto('queue_counts')
    .values({ account_id: accountId, queued: delta })
    .onConflict((oc) => oc.column('account_id').doUpdateSet((eb) => ({ queued: eb('queue_counts.queued', '+', delta) })))
    .execute();
}

/** Queued jobs of the account, or of every account. */
export async function countQueued(db: Kysely<Database>, accountId?: string): Promise<number> {
  if (accountId !== undefined) {
    const row = await db.selectFrom('queue_counts').select('queued').where('account_id', '=', accountId).executeTakeFirst();
    return row ? toNumber(row.queued) : 0;
  }
  const row = await db
    .selectFrom('queue_counts')
    .select((eb) => eb.fn.sum<number | string | bigint | null>('queued').as('n'))
    .executeTakeFirstOrThrow();
  return row.n === null ? 0 : toNumber(row.n);
}
