// JobStore over kysely, composed into the SQL metadata store. Every status
// change is one conditional UPDATE (`... WHERE status = from`) whose row count
// says who won, so instances sharing a database never both move a job.
//
// The insert, with its `seq` and the queue bounds, is job-create.ts; the
// claim job-claim.ts; the status moves and progress job-transition.ts; the
// scheduler's read and a queued job's place job-queue-reads.ts.
import type { Kysely } from 'kysely';
import { parseJson } from '../../lib/json.ts';
import type { JobStore } from '../types.ts';
import { ACTIVE, createSqlJobClaim } from './job-claim.ts';
import { createSqlJobInsert } from './job-create.ts';
import { createSqlJobListing } from './job-listing.ts';
import { createSqlJobQueueReads } from './job-queue-reads.ts';
import { createSqlJobTierCounts } from './job-tier-counts.ts';
import { createSqlJobTransitions } from './job-transition.ts';
import { type DirectReader, kyselyTransact, queryTemplate, type Transact } from './query-template.ts';
import { createQueueCounts, repairQueueCounts } from './queue-counts.ts';
import { isQueued } from './queued-pick.ts';
import { JOB_SUMMARY_COLUMNS, toJobSummary } from './rows.ts';
import { type Database, toNumber } from './schema.ts';

const EXPIRED = 'expired';
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
  /** Runs the hot transactions (a submission, a claim); kysely's by default. */
  transact?: Transact;
}

export function createSqlJobStore(db: Kysely<Database>, opts: SqlJobStoreOptions = {}): JobStore {
  const { direct, rowLocks = false, transact = kyselyTransact(db) } = opts;
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

  // The run's read of the workflow it executes (listJobWorkflows of one job), compiled once.
  const oneWorkflow = queryTemplate(
    db,
    2,
    (accountId: string, id: string) => db.selectFrom('jobs').select(['id', 'workflow']).where('account_id', '=', accountId).where('id', '=', id),
    direct,
  );

  // Every submission counts the queue twice (admission, then the insert) and every claim changes it.
  const counts = createQueueCounts(db, direct);

  return {
    // One connection, first come first served (FifoSqliteDialect); PostgreSQL's pool runs writes side by side.
    serialWrites: !rowLocks,
    ...createSqlJobListing(db),
    ...createSqlJobTierCounts(db),
    ...createSqlJobQueueReads(db, direct),
    ...createSqlJobTransitions(db, counts),

    createJob: createSqlJobInsert(db, counts, transact),
    claimJob: createSqlJobClaim(db, counts, rowLocks, transact),
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
      const page = (some: string[]) =>
        some.length === 1
          ? oneWorkflow(accountId, some[0])
          : db.selectFrom('jobs').select(['id', 'workflow']).where('account_id', '=', accountId).where('id', 'in', some).execute();
      for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
        const rows = await page(ids.slice(i, i + IDS_PER_QUERY));
        for (const r of rows) found.set(r.id, r.workflow);
      }
      const out = [];
      for (const id of ids) {
        const text = found.get(id);
        if (text !== undefined) out.push({ id, workflow: parseJson(text) as Record<string, unknown> });
      }
      return out;
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
        .where(isQueued('status'))
        .orderBy('priority', 'desc')
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows.map(toJobSummary);
    },
    repairQueueCounts: () => repairQueueCounts(db),
    async countJobs(statuses, accountId) {
      if (statuses.length === 0) return 0;
      if (statuses.length === 1 && statuses[0] === 'queued') return counts.count(db, accountId);
      let query = db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', 'in', statuses);
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      return toNumber((await query.executeTakeFirstOrThrow()).n);
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
