// The SQL JobStore's reads of the queue that run per job: the scheduler's
// accounts with a queue (about twice per started job) and a queued job's
// place (every GET of one). Compiled once (query-template.ts).
import { type Kysely, sql } from 'kysely';
import type { JobStore } from '../types.ts';
import { CLAIM_PREFIX } from './job-claim.ts';
import { type DirectReader, queryTemplate } from './query-template.ts';
import { isQueued } from './queued-pick.ts';
import { type Database, toNumber } from './schema.ts';

export function createSqlJobQueueReads(
  db: Kysely<Database>,
  direct?: DirectReader,
): Pick<JobStore, 'listAccountsWithQueuedJobs' | 'peekQueuedAccounts' | 'countQueuedBefore'> {
  // The limit is a bound parameter (kysely binds it), so it fits a template.
  const accountsWithQueue = queryTemplate(
    db,
    1,
    (limit: number) => {
      // The accounts come from their queue counts, each one's oldest job from the (account_id,
      // status, seq) index: a few seeks per account with a queue, not a pass over the whole queue.
      const queued = db
        .selectFrom('queue_counts as c')
        .select((eb) => [
          'c.account_id',
          'c.queued',
          eb
            .selectFrom('jobs')
            .select((j) => j.fn.min('seq').as('s'))
            .whereRef('jobs.account_id', '=', 'c.account_id')
            .where('jobs.status', '=', 'queued')
            .as('oldest_seq'),
        ])
        .where('c.queued', '>', 0)
        // A count that went wrong (see README, upgrading) must not take one of the `limit` places.
        .where(({ exists, selectFrom }) =>
          exists(selectFrom('jobs').select('jobs.id').whereRef('jobs.account_id', '=', 'c.account_id').where('jobs.status', '=', 'queued')),
        )
        .orderBy('oldest_seq')
        .limit(limit)
        .as('q');
      // Each account's claim row holds when a job of it was last claimed (claimJob).
      return db
        .selectFrom(queued)
        .leftJoin('counters', (join) => join.on('counters.name', '=', sql<string>`${CLAIM_PREFIX} || q.account_id`))
        .select(['q.account_id', 'q.oldest_seq', 'q.queued', 'counters.value as last_claimed_at'])
        .orderBy('q.oldest_seq');
    },
    direct,
  );

  // Most passes of the scheduler (one after every job's end) find no queue at all, and most
  // others one account's: the small queue_counts table says so for a fraction of the query
  // above, which sets up its subqueries and sort even when it returns nothing.
  const anyQueue = queryTemplate(db, 0, () => db.selectFrom('queue_counts').select('account_id').where('queued', '>', 0).limit(1), direct);
  const queuedAccounts = queryTemplate(
    db,
    1,
    (limit: number) => db.selectFrom('queue_counts').select(['account_id', 'queued']).where('queued', '>', 0).limit(limit),
    direct,
  );

  // A queued job's place, asked by every GET of one: two counts, each along an index: earlier
  // jobs of the other accounts (status, seq), and the account's own ahead in its pick order
  // (the queued pick index, queued-pick.ts). One query OR-ing them would scan.
  const queuedCount = () =>
    db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where(isQueued('status'));
  const queuedOthersBefore = queryTemplate(
    db,
    2,
    (seq: number, accountId: string) => queuedCount().where('seq', '<', seq).where('account_id', '<>', accountId),
    direct,
  );
  const queuedOwnBefore = queryTemplate(
    db,
    3,
    (accountId: string, priority: number, seq: number) =>
      queuedCount()
        .where('account_id', '=', accountId)
        .where((eb) => eb.or([eb('priority', '>', priority), eb.and([eb('priority', '=', priority), eb('seq', '<', seq)])])),
    direct,
  );

  return {
    async listAccountsWithQueuedJobs(limit) {
      if ((await anyQueue()).length === 0) return [];
      const rows = await accountsWithQueue(limit);
      // A count above 0 always has a queued job under it (both change in one transaction); null would be a count gone wrong.
      return rows.flatMap((r) =>
        r.oldest_seq === null
          ? []
          : [
              {
                account_id: r.account_id,
                oldest_seq: toNumber(r.oldest_seq),
                last_claimed_at: r.last_claimed_at === null ? 0 : toNumber(r.last_claimed_at),
                queued: toNumber(r.queued),
              },
            ],
      );
    },
    async peekQueuedAccounts(limit) {
      return (await queuedAccounts(limit)).map((r) => ({ account_id: r.account_id, queued: toNumber(r.queued) }));
    },
    async countQueuedBefore({ seq, account_id, priority }) {
      const [others] = await queuedOthersBefore(seq, account_id);
      const [own] = await queuedOwnBefore(account_id, priority, seq);
      return toNumber(others.n) + toNumber(own.n);
    },
  };
}
