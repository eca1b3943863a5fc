// AssetStore over kysely: `assets` rows over `blobs` rows (hash and size live
// on the blob), plus `blocked_blobs`. Dialect-neutral SQL only, as in every
// store here; the sweep's and the scanner's writes are in asset-cleanup.ts.
import type { Kysely } from 'kysely';
import type { AssetStore } from '../types.ts';
import { createSqlAssetCleanup } from './asset-cleanup.ts';
import { createSqlAssetCommit } from './asset-commit.ts';
import { type DirectReader, kyselyTransact, queryTemplate, type Transact } from './query-template.ts';
import { bumpViews, live, selectAssets, toAsset, toBlob } from './rows.ts';
import type { Database } from './schema.ts';

/**
 * `direct`: runs the hot job-output read without kysely's executor when the
 * dialect can (SQLite); `transact`: runs an asset's commit (kysely's by default).
 */
export function createSqlAssetStore(db: Kysely<Database>, direct?: DirectReader, transact: Transact = kyselyTransact(db)): AssetStore {
  // The second read of every GET /api/v2/jobs/{id}, compiled once. Assets
  // carry no commit sequence; created_at (stamped at commit) then id stands in for it.
  const jobAssets = queryTemplate(
    db,
    2,
    (jobId: string, accountId: string) =>
      selectAssets(db)
        .where('assets.job_id', '=', jobId)
        .where('assets.account_id', '=', accountId)
        .orderBy('assets.created_at')
        .orderBy('assets.id'),
    direct,
  );
  // Dedup of every job output (and upload) asks it: compiled once.
  const assetsByHash = queryTemplate(
    db,
    3,
    (hash: string, accountId: string, now: number) =>
      selectAssets(db)
        .where('blobs.hash', '=', hash)
        .where('assets.account_id', '=', accountId)
        .where(live(now))
        .orderBy('assets.created_at', 'desc')
        .orderBy('assets.id', 'desc'),
    direct,
  );

  return {
    ...createSqlAssetCleanup(db, direct),

    commitAsset: createSqlAssetCommit(db, transact),
    async setBlobHash(key, hash) {
      await db.updateTable('blobs').set({ hash }).where('key', '=', key).execute();
    },
    async findBlobByHash(hash) {
      const row = await db.selectFrom('blobs').selectAll().where('hash', '=', hash).executeTakeFirst();
      return row ? toBlob(row) : null;
    },

    async getAsset(accountId, id, now) {
      const row = await selectAssets(db).where('assets.id', '=', id).where('assets.account_id', '=', accountId).where(live(now)).executeTakeFirst();
      return row ? toAsset(row) : null;
    },
    async findAssetByPath(accountId, filePath, now) {
      const row = await selectAssets(db)
        .where('assets.account_id', '=', accountId)
        .where('assets.file_path', '=', filePath)
        .where(live(now))
        .orderBy('assets.created_at', 'desc')
        .orderBy('assets.id', 'desc')
        .executeTakeFirst();
      return row ? toAsset(row) : null;
    },
    async listAssetsByHash(accountId, hash, now) {
      return (await assetsByHash(hash, accountId, now)).map(toAsset);
    },
    async listJobAssets(accountId, jobId) {
      return (await jobAssets(jobId, accountId)).map(toAsset);
    },
    async deleteAsset(accountId, id, now) {
      return db.transaction().execute(async (tx) => {
        const rows = await tx
          .deleteFrom('assets')
          .where('id', '=', id)
          .where('account_id', '=', accountId)
          .where(live(now))
          .returning('job_id')
          .execute();
        await bumpViews(
          tx,
          rows.map((r) => r.job_id),
        );
        return rows.length > 0;
      });
    },
  };
}
