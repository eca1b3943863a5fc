// JobStore over kysely, composed into the SQL metadata store. Every status
// change is one conditional UPDATE (`... WHERE status = from`) whose row count
// says who won, so instances sharing a database never both move a job.
//
// The insert, with its `seq` and the queue bounds, is job-create.ts.
import { type Kysely, type SelectQueryBuilder, sql, type Updateable } from 'kysely';
import { parseJson, stringifyJson } from '../../lib/json.ts';
import type { JobStore } from '../types.ts';
import { createSqlJobInsert } from './job-create.ts';
import { createSqlJobListing } from './job-listing.ts';
import { createSqlJobTierCounts } from './job-tier-counts.ts';
import { type DirectReader, queryTemplate } from './query-template.ts';
import { adjustQueued, countQueued, queueDelta, repairQueueCounts } from './queue-counts.ts';
import { idsToText, JOB_SUMMARY_COLUMNS, toJobSummary } from './rows.ts';
import { type Database, type JobsTable, toNumber } from './schema.ts';
import { takeTurn } from './take-turn.ts';
import { insertWebhookDeliveries } from './webhook-outbox-store.ts';

/** The `counters` row that one account's claims take in turn (see claimJob); it holds the last claim's time. */
const CLAIM_PREFIX = 'claim:';
const claimCounter = (accountId: string) => `${CLAIM_PREFIX}${accountId}`;
/** Statuses that hold one of the account's parallel slots, and that a lease covers. */
const ACTIVE = ['running', 'canceling'];
/** Picks retried within one claim when a cancel takes the picked job first. */
const CLAIM_PICKS = 3;
const EXPIRED = 'expired';
/** Progress after a job has left these statuses would overwrite a final snapshot. */
const PROGRESS_STATUSES = ['running', 'canceling'];

const json = (v: Record<string, unknown> | null) => (v === null ? null : stringifyJson(v));
/** Bound parameters per `IN` list of listJobWorkflows, well under every dialect's limit. */
const IDS_PER_QUERY = 100;

export interface SqlJobStoreOptions {
  /** Runs the hot reads without kysely's executor when the dialect can (SQLite). */
  direct?: DirectReader;
  /**
   * The dialect has row locks (PostgreSQL): a claim locks the job it picks
   * (FOR UPDATE SKIP LOCKED) and the reaper skips jobs another runner is
   * taking back. SQLite runs one write transaction at a time instead.
   */
  rowLocks?: boolean;
}

export function createSqlJobStore(db: Kysely<Database>, opts: SqlJobStoreOptions = {}): JobStore {
  const { direct, rowLocks = false } = opts;
  // The first read of every GET /api/v2/jobs/{id} (the second, its outputs,
  // is in asset-store.ts), compiled once.
  const ownJob = queryTemplate(
    db,
    2,
    (id: string, accountId: string) => db.selectFrom('jobs').select(JOB_SUMMARY_COLUMNS).where('id', '=', id).where('account_id', '=', accountId),
    direct,
  );

  // Every GET of a finished job whose view this instance keeps: its only read.
  const jobStamp = queryTemplate(
    db,
    2,
    (id: string, accountId: string) =>
      db.selectFrom('jobs').select(['status', 'expires_at', 'view_version']).where('id', '=', id).where('account_id', '=', accountId),
    direct,
  );

  return {
    ...createSqlJobListing(db),
    ...createSqlJobTierCounts(db),

    createJob: createSqlJobInsert(db),
    async getJob(accountId, id) {
      const [row] = await ownJob(id, accountId);
      return row ? toJobSummary(row) : null;
    },
    async getJobStamp(accountId, id) {
      const [row] = await jobStamp(id, accountId);
      return row ? { status: row.status, expires_at: toNumber(row.expires_at), view_version: toNumber(row.view_version) } : null;
    },
    async getJobById(id) {
      const row = await db.selectFrom('jobs').select(JOB_SUMMARY_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row ? toJobSummary(row) : null;
    },
    async listJobWorkflows(accountId, ids) {
      const found = new Map<string, string>();
      for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
        const rows = await db
          .selectFrom('jobs')
          .select(['id', 'workflow'])
          .where('account_id', '=', accountId)
          .where('id', 'in', ids.slice(i, i + IDS_PER_QUERY))
          .execute();
        for (const r of rows) found.set(r.id, r.workflow);
      }
      const out = [];
      for (const id of ids) {
        const text = found.get(id);
        if (text !== undefined) out.push({ id, workflow: parseJson(text) as Record<string, unknown> });
      }
      return out;
    },

    async transitionJob(id, from, to, patch = {}, guard = {}) {
      const { add_attempts, progress, error, outputs_reused, cached_nodes, temp_asset_ids, lease, outbox, ...times } = patch;
      // Into or out of the queue, or with deliveries to write: the move, the account's
      // queue count and the deliveries commit together or not at all.
      const delta = queueDelta(from, to);
      if (delta !== 0 || (outbox !== undefined && outbox.length > 0)) {
        return db.transaction().execute(async (tx) => {
          const accountId = await move(tx);
          if (accountId === null) return false;
          await adjustQueued(tx, accountId, delta);
          if (outbox !== undefined && outbox.length > 0) await insertWebhookDeliveries(tx, outbox);
          return true;
        });
      }
      return (await move(db)) !== null;

      /** The moved job's account, or null when it did not move. */
      async function move(db: Kysely<Database>): Promise<string | null> {
        let query = db
          .updateTable('jobs')
          .set((eb) => {
            const set: Updateable<JobsTable> = { status: to };
            // Only keys present in the patch change; an explicit null clears.
            for (const [k, v] of Object.entries(times)) if (v !== undefined) Object.assign(set, { [k]: v });
            if (progress !== undefined) set.progress = json(progress);
            if (error !== undefined) set.error = json(error);
            if (outputs_reused !== undefined) set.outputs_reused = outputs_reused ? 1 : 0;
            if (cached_nodes !== undefined) set.cached_nodes = idsToText(cached_nodes);
            if (temp_asset_ids !== undefined) set.temp_asset_ids = idsToText(temp_asset_ids);
            const counts = add_attempts ? { attempts: eb('attempts', '+', add_attempts) } : {};
            // A released lease fences out its holder at once, not only once the job is claimed again.
            const release = lease === null ? { lease_owner: null, lease_expires_at: null, lease_token: sql<number>`lease_token + 1` } : {};
            return { ...set, ...counts, ...release };
          })
          .where('id', '=', id)
          .where('status', '=', from);
        if (guard.lease_token !== undefined) query = query.where('lease_token', '=', guard.lease_token);
        const before = guard.lease_expired_before;
        if (before !== undefined) query = query.where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', before)]));
        const row = await query.returning('account_id').executeTakeFirst();
        return row?.account_id ?? null;
      }
    },
    async saveProgress(id, progress, outputsReused, leaseToken) {
      let query = db
        .updateTable('jobs')
        .set(
          outputsReused === undefined
            ? { progress: stringifyJson(progress) }
            : { progress: stringifyJson(progress), outputs_reused: outputsReused ? 1 : 0 },
        )
        .where('id', '=', id)
        .where('status', 'in', PROGRESS_STATUSES);
      if (leaseToken !== undefined) query = query.where('lease_token', '=', leaseToken);
      await query.execute();
    },

    async claimJob({ account_id, limit, owner, now, lease_ms }) {
      if (limit <= 0) return null;
      return db.transaction().execute(async (tx) => {
        // The account's claims take turns (take-turn.ts): the count below sees every earlier claim
        // of the account, so the tier limit holds across runners. A claim that starts a job then
        // sets the row to its time: the accounts' turns (listAccountsWithQueuedJobs) across runners.
        await takeTurn(tx, claimCounter(account_id));
        const { n } = await tx
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('account_id', '=', account_id)
          .where('status', 'in', ACTIVE)
          .executeTakeFirstOrThrow();
        if (toNumber(n) >= limit) return null;
        for (let attempt = 0; attempt < CLAIM_PICKS; attempt++) {
          let pick = tx
            .selectFrom('jobs')
            .select(['id', 'lease_token'])
            .where('account_id', '=', account_id)
            .where('status', '=', 'queued')
            .orderBy('priority', 'desc')
            .orderBy('seq')
            .limit(1);
          // A cancel may hold the row: the next job is as good, and waiting for it is not.
          if (rowLocks) pick = pick.forUpdate().skipLocked();
          const picked = await pick.executeTakeFirst();
          if (!picked) return null;
          const row = await tx
            .updateTable('jobs')
            .set((eb) => ({
              status: 'running',
              started_at: now,
              attempts: eb('attempts', '+', 1),
              lease_owner: owner,
              lease_expires_at: now + lease_ms,
              lease_token: toNumber(picked.lease_token) + 1,
            }))
            .where('id', '=', picked.id)
            .where('status', '=', 'queued')
            .returning(JOB_SUMMARY_COLUMNS)
            .executeTakeFirst();
          if (row) {
            await tx.updateTable('counters').set({ value: now }).where('name', '=', claimCounter(account_id)).execute();
            await adjustQueued(tx, account_id, -1);
            return toJobSummary(row);
          }
        }
        return null;
      });
    },
    async renewLease(id, token, expiresAt) {
      const row = await db
        .updateTable('jobs')
        .set({ lease_expires_at: expiresAt })
        .where('id', '=', id)
        .where('lease_token', '=', token)
        .where('lease_owner', 'is not', null)
        .where('status', 'in', ACTIVE)
        .returning('status')
        .executeTakeFirst();
      return row?.status ?? null;
    },
    async listExpiredLeases(now, limit) {
      const rows = await db
        .selectFrom('jobs')
        .select(JOB_SUMMARY_COLUMNS)
        .where('status', 'in', ACTIVE)
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows.map(toJobSummary);
    },

    async listJobsByStatus(statuses, limit) {
      // `IN ()` is a syntax error on PostgreSQL, so an empty set never reaches SQL.
      if (statuses.length === 0) return [];
      const rows = await db.selectFrom('jobs').select(JOB_SUMMARY_COLUMNS).where('status', 'in', statuses).orderBy('seq').limit(limit).execute();
      return rows.map(toJobSummary);
    },
    async listQueuedJobs(accountId, limit) {
      const rows = await db
        .selectFrom('jobs')
        .select(JOB_SUMMARY_COLUMNS)
        .where('account_id', '=', accountId)
        .where('status', '=', 'queued')
        .orderBy('priority', 'desc')
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows.map(toJobSummary);
    },
    async listAccountsWithQueuedJobs(limit) {
      // The accounts come from their queue counts, each one's oldest job from the (account_id,
      // status, seq) index: a few seeks per account with a queue, not a pass over the whole queue.
      const queued = db
        .selectFrom('queue_counts as c')
        .select((eb) => [
          'c.account_id',
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
      const rows = await db
        .selectFrom(queued)
        .leftJoin('counters', (join) => join.on('counters.name', '=', sql<string>`${CLAIM_PREFIX} || q.account_id`))
        .select(['q.account_id', 'q.oldest_seq', 'counters.value as last_claimed_at'])
        .orderBy('q.oldest_seq')
        .execute();
      // A count above 0 always has a queued job under it (both change in one transaction); null would be a count gone wrong.
      return rows.flatMap((r) =>
        r.oldest_seq === null
          ? []
          : [
              {
                account_id: r.account_id,
                oldest_seq: toNumber(r.oldest_seq),
                last_claimed_at: r.last_claimed_at === null ? 0 : toNumber(r.last_claimed_at),
              },
            ],
      );
    },
    repairQueueCounts: () => repairQueueCounts(db),
    async countJobs(statuses, accountId) {
      if (statuses.length === 0) return 0;
      if (statuses.length === 1 && statuses[0] === 'queued') return countQueued(db, accountId);
      let query = db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', 'in', statuses);
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      return toNumber((await query.executeTakeFirstOrThrow()).n);
    },
    async countQueuedBefore({ seq, account_id, priority }) {
      // Two counts, each along an index: earlier jobs of the other accounts
      // (status, seq), and the account's own ahead in its pick order
      // (account_id, status, priority desc, seq). One query OR-ing them would scan.
      const count = (query: SelectQueryBuilder<Database, 'jobs', object>) =>
        query
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
          .then((row) => toNumber(row.n));
      const queued = db.selectFrom('jobs').where('status', '=', 'queued');
      const others = await count(queued.where('seq', '<', seq).where('account_id', '<>', account_id));
      const own = await count(
        queued
          .where('account_id', '=', account_id)
          .where((eb) => eb.or([eb('priority', '>', priority), eb.and([eb('priority', '=', priority), eb('seq', '<', seq)])])),
      );
      return others + own;
    },

    async hideFromHistory(accountId, statuses, ids, at) {
      if (statuses.length === 0) return 0;
      const hide = async (some?: readonly string[]) => {
        let query = db
          .updateTable('jobs')
          .set({ history_hidden_at: at })
          .where('account_id', '=', accountId)
          .where('status', 'in', statuses)
          .where('history_hidden_at', 'is', null);
        if (some !== undefined) query = query.where('id', 'in', some);
        return Number((await query.executeTakeFirst()).numUpdatedRows);
      };
      if (ids === 'all') return hide();
      let hidden = 0;
      for (let i = 0; i < ids.length; i += IDS_PER_QUERY) hidden += await hide(ids.slice(i, i + IDS_PER_QUERY));
      return hidden;
    },

    async expireJobs(terminalStatuses, now, limit) {
      // `expired` is never a source, so a second sweep finds nothing to report.
      const from = terminalStatuses.filter((s) => s !== EXPIRED);
      if (from.length === 0) return [];
      // UPDATE ... LIMIT is not portable; an IN subquery with LIMIT is. The
      // outer WHERE repeats the condition: PostgreSQL re-checks it on a row a
      // concurrent sweeper just moved, and RETURNING reports only rows this
      // statement changed, so two sweepers never both report a job.
      const rows = await db
        .updateTable('jobs')
        .set({ status: EXPIRED })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('jobs')
            .select('id')
            .where('status', 'in', from)
            .where('expires_at', '<=', now)
            .orderBy('expires_at')
            .orderBy('seq')
            .limit(limit),
        )
        .where('status', 'in', from)
        .where('expires_at', '<=', now)
        .returning('id')
        .execute();
      return rows.map((r) => r.id);
    },
  };
}
