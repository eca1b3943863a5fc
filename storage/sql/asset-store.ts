// AssetStore over kysely: `assets` rows over `blobs` rows (hash and size live
// on the blob), plus `blocked_blobs`. Dialect-neutral SQL only, as in every
// store here; the sweep's and the scanner's writes are in asset-cleanup.ts.
import { type Kysely, sql } from 'kysely';
import { type AssetStore, LeaseLostError } from '../types.ts';
import { createSqlAssetCleanup } from './asset-cleanup.ts';
import { type DirectReader, queryTemplate } from './query-template.ts';
import { bumpViews, live, selectAssets, toAsset, toBlob } from './rows.ts';
import type { Database } from './schema.ts';

/** `direct`: runs the hot job-output read without kysely's executor when the dialect can (SQLite). */
export function createSqlAssetStore(db: Kysely<Database>, direct?: DirectReader): AssetStore {
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

  return {
    ...createSqlAssetCleanup(db),

    async commitAsset(blob, asset, fence) {
      return db.transaction().execute(async (tx) => {
        if (fence) {
          // The write of the job's row holds it until commit: a runner taking the job
          // back (which bumps the token) waits, or this finds the token moved on.
          const held = await tx
            .updateTable('jobs')
            .set({ view_version: sql<number>`view_version + 1` })
            .where('id', '=', fence.job_id)
            .where('lease_token', '=', fence.lease_token)
            .where('status', 'in', ['running', 'canceling'])
            .executeTakeFirst();
          if (Number(held.numUpdatedRows) === 0) throw new LeaseLostError(`job ${fence.job_id}: its lease moved on; the output is not stored`);
        }
        const inserted = await tx
          .insertInto('blobs')
          .values({ key: blob.key, hash: blob.hash, size: blob.size, created_at: Date.now() })
          .onConflict((oc) => oc.column('key').doNothing())
          .executeTakeFirst();
        await tx
          .insertInto('assets')
          .values({ ...asset, node_id: asset.node_id ?? null, output_type: asset.output_type ?? null, tags: JSON.stringify(asset.tags) })
          .execute();
        // An output committed without a fence changes its job's view too (the fenced update above bumped it).
        if (!fence && asset.job_id !== null) await bumpViews(tx, [asset.job_id]);
        const row = await selectAssets(tx).where('assets.id', '=', asset.id).executeTakeFirstOrThrow();
        return { asset: toAsset(row), blob_created: Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0 };
      });
    },
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
      const rows = await selectAssets(db)
        .where('blobs.hash', '=', hash)
        .where('assets.account_id', '=', accountId)
        .where(live(now))
        .orderBy('assets.created_at', 'desc')
        .orderBy('assets.id', 'desc')
        .execute();
      return rows.map(toAsset);
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
