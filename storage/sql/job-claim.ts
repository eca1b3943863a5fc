// JobStore.claimJob over kysely: an account's next queued job moved to
// `running` under a new lease, if the account is under its limit, as one
// transaction. Every started job runs it, so its statements are compiled once
// (query-template.ts).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { JobStore } from '../types.ts';
import { statementTemplate, type Transact } from './query-template.ts';
import type { QueueCounts } from './queue-counts.ts';
import { isQueued } from './queued-pick.ts';
import { CLAIMED_COLUMNS, toClaimedJob } from './rows.ts';
import { type Database, toNumber } from './schema.ts';
import { compiledTakeTurn } from './take-turn.ts';

/** The `counters` row of one account's claims: it holds the last claim's time; on PostgreSQL the claims also take their turns on it. */
export const CLAIM_PREFIX = 'claim:';
const claimCounter = (accountId: string) => `${CLAIM_PREFIX}${accountId}`;
/** Statuses that hold one of the account's parallel slots, and that a lease covers. */
export const ACTIVE = ['running', 'canceling'];
/** What a claim sets on the job it starts, `token` its new lease token. */
const started = (now: number, owner: string, expiresAt: number, token: number | RawBuilder<number>) => ({
  status: 'running',
  started_at: now,
  attempts: sql<number>`attempts + 1`,
  lease_owner: owner,
  lease_expires_at: expiresAt,
  lease_token: token,
});
/** The queue counts of other accounts that have queued jobs (queue-counts.ts): none, and the account's line is the only one. */
const othersQueuedQuery = (db: Kysely<Database>, accountId: string) =>
  db.selectFrom('queue_counts').select('account_id').where('account_id', '<>', accountId).where('queued', '>', 0).limit(1);

/** Picks retried within one claim when a cancel takes the picked job first. */
const CLAIM_PICKS = 3;

/**
 * `rowLocks`: the dialect has row locks (PostgreSQL): a claim locks the job
 * it picks (FOR UPDATE SKIP LOCKED). SQLite runs one write transaction at a time instead.
 */
export function createSqlJobClaim(db: Kysely<Database>, counts: QueueCounts, rowLocks: boolean, transact: Transact): JobStore['claimJob'] {
  if (!rowLocks) return createSerialClaim(db, counts, transact);
  const takeTurn = compiledTakeTurn(db);
  const active = statementTemplate(1, (accountId: string) =>
    db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId)
      .where('status', 'in', ACTIVE),
  );
  const pick = statementTemplate(1, (accountId: string) => {
    const query = db
      .selectFrom('jobs')
      .select(['id', 'lease_token'])
      .where('account_id', '=', accountId)
      .where(isQueued('status'))
      .orderBy('priority', 'desc')
      .orderBy('seq')
      .limit(1);
    // A cancel may hold the row: the next job is as good, and waiting for it is not.
    return rowLocks ? query.forUpdate().skipLocked() : query;
  });
  const start = statementTemplate(5, (id: string, now: number, owner: string, expiresAt: number, token: number) =>
    db
      .updateTable('jobs')
      .set(started(now, owner, expiresAt, token))
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .returning(CLAIMED_COLUMNS),
  );
  const stamp = statementTemplate(2, (name: string, now: number) => db.updateTable('counters').set({ value: now }).where('name', '=', name));
  const othersQueued = statementTemplate(1, (accountId: string) => othersQueuedQuery(db, accountId));

  return async ({ account_id, limit, owner, now, lease_ms, alone }) => {
    if (limit <= 0) return null;
    const counter = claimCounter(account_id);
    return db.transaction().execute(async (tx) => {
      // The account's claims take turns (take-turn.ts): the count below sees every earlier claim
      // of the account, so the tier limit holds across runners. A claim that starts a job then
      // sets the row to its time: the accounts' turns (listAccountsWithQueuedJobs) across runners.
      await takeTurn(tx, counter);
      const [{ n }] = (await active(tx, account_id)).rows;
      if (toNumber(n) >= limit) return null;
      if (alone && (await othersQueued(tx, account_id)).rows.length > 0) return null;
      for (let attempt = 0; attempt < CLAIM_PICKS; attempt++) {
        const [picked] = (await pick(tx, account_id)).rows;
        if (!picked) return null;
        const [row] = (await start(tx, picked.id, now, owner, now + lease_ms, toNumber(picked.lease_token) + 1)).rows;
        if (row) {
          await stamp(tx, counter, now);
          await counts.adjust(tx, account_id, -1);
          return toClaimedJob(row);
        }
      }
      return null;
    });
  };
}

/**
 * The claim where one write transaction runs at a time (SQLite): the limit's
 * count, the pick and the move are one UPDATE, which takes the write lock
 * before it reads, so no turn needs taking first and no cancel can come
 * between the pick and the move. Three statements per claim instead of six:
 * every started job runs them, and on SQLite each statement costs more in
 * place (caches cold after a request's work) than in a loop.
 */
function createSerialClaim(db: Kysely<Database>, counts: QueueCounts, transact: Transact): JobStore['claimJob'] {
  const statement = (alone: boolean) =>
    statementTemplate(5, (accountId: string, limit: number, now: number, owner: string, expiresAt: number) => {
      const claim = db
        .updateTable('jobs')
        .set(started(now, owner, expiresAt, sql<number>`lease_token + 1`))
        .where('id', '=', (eb) =>
          eb
            .selectFrom('jobs as next')
            .select('next.id')
            .where('next.account_id', '=', accountId)
            .where(isQueued('next.status'))
            .orderBy('next.priority', 'desc')
            .orderBy('next.seq')
            .limit(1),
        )
        .where((eb) =>
          eb(
            eb
              .selectFrom('jobs as held')
              .select((h) => h.fn.countAll().as('n'))
              .where('held.account_id', '=', accountId)
              .where('held.status', 'in', ACTIVE),
            '<',
            limit,
          ),
        );
      return (alone ? claim.where((eb) => eb.not(eb.exists(othersQueuedQuery(db, accountId)))) : claim).returning(CLAIMED_COLUMNS);
    });
  const claims = { shared: statement(false), alone: statement(true) };
  // No turn taken before: the account's claim row may not exist yet.
  const stamp = statementTemplate(2, (name: string, now: number) =>
    db
      .insertInto('counters')
      .values({ name, value: now })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))),
  );
  return async ({ account_id, limit, owner, now, lease_ms, alone }) => {
    if (limit <= 0) return null;
    const claim = alone ? claims.alone : claims.shared;
    return transact(async (tx) => {
      const [row] = (await claim(tx, account_id, limit, now, owner, now + lease_ms)).rows;
      if (!row) return null;
      await stamp(tx, claimCounter(account_id), now);
      await counts.adjust(tx, account_id, -1);
      return toClaimedJob(row);
    });
  };
}
