// AssetStore.commitAsset over kysely: the blob row if absent, the asset over
// it and its job's view bumped, in one transaction. Every job output runs it,
// so its statements are compiled once (query-template.ts).
import { type Kysely, sql } from 'kysely';
import { type AssetStore, LeaseLostError } from '../types.ts';
import { ACTIVE } from './job-claim.ts';
import { statementTemplate } from './query-template.ts';
import { selectAssets, toAsset } from './rows.ts';
import type { Database } from './schema.ts';

export function createSqlAssetCommit(db: Kysely<Database>): AssetStore['commitAsset'] {
  const bumpView = (id: string) => db.updateTable('jobs').set({ view_version: sql<number>`view_version + 1` }).where('id', '=', id);
  const fenced = statementTemplate(2, (jobId: string, token: number) =>
    bumpView(jobId).where('lease_token', '=', token).where('status', 'in', ACTIVE),
  );
  const unfenced = statementTemplate(1, bumpView);
  const insertBlob = statementTemplate(4, (key: string, hash: string | null, size: number, createdAt: number) =>
    db
      .insertInto('blobs')
      .values({ key, hash, size, created_at: createdAt })
      .onConflict((oc) => oc.column('key').doNothing()),
  );
  const insertAsset = statementTemplate(
    11,
    (
      id: string,
      account_id: string,
      blob_key: string,
      content_type: string,
      file_path: string | null,
      tags: string,
      created_at: number,
      expires_at: number | null,
      job_id: string | null,
      node_id: string | null,
      output_type: string | null,
    ) =>
      db
        .insertInto('assets')
        .values({ id, account_id, blob_key, content_type, file_path, tags, created_at, expires_at, job_id, node_id, output_type }),
  );
  const committed = statementTemplate(1, (id: string) => selectAssets(db).where('assets.id', '=', id));

  return async (blob, asset, fence) =>
    db.transaction().execute(async (tx) => {
      if (fence) {
        // The write of the job's row holds it until commit: a runner taking the job
        // back (which bumps the token) waits, or this finds the token moved on.
        const held = await fenced(tx, fence.job_id, fence.lease_token);
        if (Number(held.numAffectedRows ?? 0) === 0) throw new LeaseLostError(`job ${fence.job_id}: its lease moved on; the output is not stored`);
      }
      const inserted = await insertBlob(tx, blob.key, blob.hash, blob.size, Date.now());
      // Absent optional fields are null, as the columns' default would make them.
      await insertAsset(
        tx,
        asset.id,
        asset.account_id,
        asset.blob_key,
        asset.content_type,
        asset.file_path ?? null,
        JSON.stringify(asset.tags),
        asset.created_at,
        asset.expires_at ?? null,
        asset.job_id ?? null,
        asset.node_id ?? null,
        asset.output_type ?? null,
      );
      // An output committed without a fence changes its job's view too (the fenced update above bumped it).
      if (!fence && asset.job_id !== null && asset.job_id !== undefined) await unfenced(tx, asset.job_id);
      const [row] = (await committed(tx, asset.id)).rows;
      if (row === undefined) throw new Error(`asset ${asset.id}: not found after its insert`);
      return { asset: toAsset(row), blob_created: Number(inserted.numAffectedRows ?? 0) > 0 };
    });
}
