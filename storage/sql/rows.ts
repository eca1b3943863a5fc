// Row <-> record mapping for the SQL metadata store: int8 columns to numbers,
// tags and job payloads from JSON, the asset query that takes hash and size
// from the blob, and the job columns every read but the workflow's takes.
import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import { parseJson } from '../../lib/json.ts';
import type { AccountRecord, AssetRecord, BlobRecord, ClaimedJob, JobSummary } from '../types.ts';
import { type Database, toNumber } from './schema.ts';

/** Live means not expired at `now`; a null expiry never expires. */
export const live = (now: number) => (eb: ExpressionBuilder<Database, 'assets'>) =>
  eb.or([eb('assets.expires_at', 'is', null), eb('assets.expires_at', '>', now)]);

/** Bumps the view version of these jobs (nulls and repeats skipped): their outputs changed, in the caller's transaction. */
export async function bumpViews(db: Kysely<Database>, jobIds: ReadonlyArray<string | null>): Promise<void> {
  const ids = [...new Set(jobIds.filter((id): id is string => id !== null))];
  // A sweep removes at most its batch of assets: one list per statement stays well under every dialect's limit.
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .updateTable('jobs')
      .set({ view_version: sql<number>`view_version + 1` })
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
  }
}

/** No asset points at the blob row (of an outer query on `blobs`). */
export const unreferenced = ({ not, exists, selectFrom }: ExpressionBuilder<Database, 'blobs'>) =>
  not(exists(selectFrom('assets').select('assets.id').whereRef('assets.blob_key', '=', 'blobs.key')));

/** Assets joined with their blob: hash and size live on the blob row only. */
export const selectAssets = (db: Kysely<Database>) =>
  db.selectFrom('assets').innerJoin('blobs', 'blobs.key', 'assets.blob_key').selectAll('assets').select(['blobs.hash', 'blobs.size']);

type AssetRow = Selectable<Database['assets']> & Pick<Selectable<Database['blobs']>, 'hash' | 'size'>;

// Records are extended by assignment, never as `{ ...row, added }`: V8 in
// Node 20 gives every object built that way a hidden class of its own, so
// each read made new maps and every function touching a record ran on slow
// paths. Overriding fields a spread already copied keeps one class, but
// copying with rest and spread costs (toJobSummary).
export const toAsset = (row: AssetRow): AssetRecord => {
  const { size, tags, ...r } = row;
  return Object.assign(r, {
    size_bytes: toNumber(size),
    tags: JSON.parse(tags) as string[],
    created_at: toNumber(r.created_at),
    expires_at: r.expires_at === null ? null : toNumber(r.expires_at),
  });
};

export const toAccount = (r: Selectable<Database['accounts']>): AccountRecord => ({
  ...r,
  created_at: toNumber(r.created_at),
});

export const toBlob = (r: Selectable<Database['blobs']>): BlobRecord => ({
  ...r,
  size: toNumber(r.size),
  created_at: toNumber(r.created_at),
});

const nullableNumber = (v: number | string | bigint | null) => (v === null ? null : toNumber(v));
const nullableJson = (v: string | null) => (v === null ? null : (parseJson(v) as Record<string, unknown>));

// Lists of node or asset ids: strings only, which plain JSON keeps exactly.
/** A list of ids as its column's text; null stays null. */
export const idsToText = (ids: readonly string[] | null): string | null => (ids === null ? null : JSON.stringify(ids));
const idsFromText = (text: string): string[] => JSON.parse(text) as string[];

/** Every job column but the workflow, which only listJobWorkflows reads (it may weigh megabytes). */
export const JOB_SUMMARY_COLUMNS = [
  'id',
  'account_id',
  'status',
  'seq',
  'created_at',
  'started_at',
  'completed_at',
  'expires_at',
  'progress',
  'error',
  'attempts',
  'priority',
  'metadata',
  'outputs_reused',
  'history_hidden_at',
  'cached_nodes',
  'temp_asset_ids',
  'lease_owner',
  'lease_expires_at',
  'lease_token',
  'view_version',
] as const;

type JobSummaryRow = Pick<Selectable<Database['jobs']>, (typeof JOB_SUMMARY_COLUMNS)[number]>;

/** What a claim returns: the summary's columns and the workflow, which the run needs next. */
export const CLAIMED_COLUMNS = [...JOB_SUMMARY_COLUMNS, 'workflow'] as const;

export const toClaimedJob = (row: JobSummaryRow & { workflow: string }): ClaimedJob =>
  Object.assign(toJobSummary(row), { workflow: parseJson(row.workflow) as Record<string, unknown> });

// Every field named, none taken by rest or spread: every claim, job end and
// read maps a row, and copying the row's other columns with `...` took six
// times as long (2.6 against 0.4 µs a row). The order of the keys is the one
// that spread gave: the columns', then `lease`.
export const toJobSummary = (r: JobSummaryRow): JobSummary => ({
  id: r.id,
  account_id: r.account_id,
  status: r.status,
  seq: toNumber(r.seq),
  created_at: toNumber(r.created_at),
  started_at: nullableNumber(r.started_at),
  completed_at: nullableNumber(r.completed_at),
  expires_at: toNumber(r.expires_at),
  progress: nullableJson(r.progress),
  error: nullableJson(r.error),
  // int4 comes back as a number from both drivers; Number() guards odd ones.
  attempts: Number(r.attempts),
  priority: Number(r.priority),
  metadata: nullableJson(r.metadata),
  outputs_reused: Number(r.outputs_reused) === 1,
  history_hidden_at: nullableNumber(r.history_hidden_at),
  cached_nodes: r.cached_nodes === null ? null : idsFromText(r.cached_nodes),
  temp_asset_ids: r.temp_asset_ids === null ? [] : idsFromText(r.temp_asset_ids),
  view_version: toNumber(r.view_version),
  lease: r.lease_owner === null ? null : { owner: r.lease_owner, token: toNumber(r.lease_token), expires_at: toNumber(r.lease_expires_at ?? 0) },
});
