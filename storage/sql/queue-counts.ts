// The `queue_counts` table: each account's number of queued jobs, changed in
// the transaction of every move into or out of `queued` (an insert, a claim,
// a transition), so the queue's size, the bounds and the accounts with queued
// jobs are read from a few rows instead of counting the queue; at a depth of
// thousands those counts cost more than the rest of a submission.
import { type Kysely, sql } from 'kysely';
import { type DirectReader, type Executor, statementTemplate } from './query-template.ts';
import { type Database, toNumber } from './schema.ts';

const QUEUED = 'queued';

/** +1 / -1 for a move from `from` to `to`, 0 when it neither enters nor leaves the queue. */
export const queueDelta = (from: string | null, to: string): number => (to === QUEUED ? 1 : 0) - (from === QUEUED ? 1 : 0);

export interface QueueCounts {
  /** Adds `delta` to the account's count, in the caller's transaction. */
  adjust(tx: Executor, accountId: string, delta: number): Promise<void>;
  /** Queued jobs of the account, or of every account: of `db` itself, or in a transaction. */
  count(db: Executor, accountId?: string): Promise<number>;
  /** Both counts in one read: every account's, and this account's. */
  both(db: Executor, accountId: string): Promise<{ all: number; own: number }>;
}

/**
 * The statements on `queue_counts` that every submission and claim runs,
 * compiled once (query-template.ts); a count of `db` itself reads through `direct` when it can.
 */
export function createQueueCounts(db: Kysely<Database>, direct?: DirectReader): QueueCounts {
  const read = { db, direct };
  const adjust = statementTemplate(3, (accountId: string, delta: number, add: number) =>
    db
      .insertInto('queue_counts')
      .values({ account_id: accountId, queued: delta })
      .onConflict((oc) => oc.column('account_id').doUpdateSet((eb) => ({ queued: eb('queue_counts.queued', '+', add) }))),
  );
  const own = statementTemplate(1, (accountId: string) => db.selectFrom('queue_counts').select('queued').where('account_id', '=', accountId), read);
  const all = statementTemplate(
    0,
    () => db.selectFrom('queue_counts').select((eb) => eb.fn.sum<number | string | bigint | null>('queued').as('n')),
    read,
  );
  // The account's share summed in the same pass over the (few) count rows: one statement instead of two.
  const both = statementTemplate(
    1,
    (accountId: string) =>
      db
        .selectFrom('queue_counts')
        .select((eb) => [
          eb.fn.sum<number | string | bigint | null>('queued').as('n'),
          eb.fn.sum<number | string | bigint | null>(eb.case().when('account_id', '=', accountId).then(eb.ref('queued')).else(0).end()).as('own'),
        ]),
    read,
  );
  const sum = (n: number | string | bigint | null | undefined) => (n === null || n === undefined ? 0 : toNumber(n));
  return {
    async adjust(tx, accountId, delta) {
      if (delta !== 0) await adjust(tx, accountId, delta, delta);
    },
    async count(db, accountId) {
      if (accountId !== undefined) return sum((await own(db, accountId)).rows[0]?.queued);
      return sum((await all(db)).rows[0]?.n);
    },
    async both(db, accountId) {
      const row = (await both(db, accountId)).rows[0];
      return { all: sum(row?.n), own: sum(row?.own) };
    },
  };
}

/**
 * Sets every account's count to its queued jobs where they differ (a count
 * that went wrong, e.g. written beside a process of an older version), and
 * returns what it corrected. Each account is checked in a transaction that
 * first locks its count row: moves take that row last, after their job row,
 * so a move under way either waits for the check (and applies its change on
 * top of a count that did not see it yet) or has committed before the check
 * counts. Run now and then by the sweep; on SQLite one writer makes it simple.
 */
export async function repairQueueCounts(db: Kysely<Database>): Promise<Array<{ account_id: string; was: number; is: number }>> {
  // A first look without locks; only the accounts that look wrong are checked under the lock
  // (a move under way can make a right count look wrong for a moment, never the reverse for long).
  const counts = new Map(
    (await db.selectFrom('queue_counts').select(['account_id', 'queued']).execute()).map((r) => [r.account_id, toNumber(r.queued)]),
  );
  const actual = await db
    .selectFrom('jobs')
    .select((eb) => ['account_id', eb.fn.countAll().as('n')])
    .where('status', '=', QUEUED)
    .groupBy('account_id')
    .execute();
  const suspects = new Set<string>();
  for (const r of actual) if (counts.get(r.account_id) !== toNumber(r.n)) suspects.add(r.account_id);
  const queued = new Set(actual.map((r) => r.account_id));
  for (const [accountId, n] of counts) if (n !== 0 && !queued.has(accountId)) suspects.add(accountId);
  const fixed = [];
  for (const accountId of suspects) {
    const change = await db.transaction().execute(async (tx) => {
      await tx
        .insertInto('queue_counts')
        .values({ account_id: accountId, queued: 0 })
        .onConflict((oc) => oc.column('account_id').doNothing())
        .execute();
      // The row lock (PostgreSQL; SQLite's write lock is already held): moves of this account wait from here.
      const row = await tx
        .updateTable('queue_counts')
        .set({ queued: sql<number>`queued` })
        .where('account_id', '=', accountId)
        .returning('queued')
        .executeTakeFirstOrThrow();
      const { n } = await tx
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .where('status', '=', QUEUED)
        .executeTakeFirstOrThrow();
      const was = toNumber(row.queued);
      const is = toNumber(n);
      if (was === is) return null;
      await tx.updateTable('queue_counts').set({ queued: is }).where('account_id', '=', accountId).execute();
      return { account_id: accountId, was, is };
    });
    if (change) fixed.push(change);
  }
  return fixed;
}
