// AssetStore.commitAsset over kysely: the blob row if absent, the asset over
// it and its job's view bumped, in one transaction. Every job output runs it,
// so its statements are compiled once (query-template.ts).
import { type Kysely, sql } from 'kysely';
import { type AssetStore, LeaseLostError } from '../types.ts';
import { ACTIVE } from './job-claim.ts';
import { statementTemplate, type Transact } from './query-template.ts';
import { selectAssets, toAsset } from './rows.ts';
import type { Database } from './schema.ts';

export function createSqlAssetCommit(db: Kysely<Database>, transact: Transact): AssetStore['commitAsset'] {
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
    transact(async (tx) => {
      if (fence) {
        // The write of the job's row holds it until commit: a runner taking the job
        // back (which bumps the token) waits, or this finds the token moved on.
        const held = await fenced(tx, fence.job_id, fence.lease_token);
        if (Number(held.numAffectedRows ?? 0) === 0) throw new LeaseLostError(`job ${fence.job_id}: its lease moved on; the output is not stored`);
      }
      const inserted = await insertBlob(tx, blob.key, blob.hash, blob.size, Date.now());
      const blobCreated = Number(inserted.numAffectedRows ?? 0) > 0;
      // Absent optional fields are null, as the columns' default would make them; in the columns' order.
      const row = {
        id: asset.id,
        account_id: asset.account_id,
        blob_key: asset.blob_key,
        content_type: asset.content_type,
        file_path: asset.file_path ?? null,
        tags: JSON.stringify(asset.tags),
        created_at: asset.created_at,
        expires_at: asset.expires_at ?? null,
        job_id: asset.job_id ?? null,
        node_id: asset.node_id ?? null,
        output_type: asset.output_type ?? null,
      };
      await insertAsset(
        tx,
        row.id,
        row.account_id,
        row.blob_key,
        row.content_type,
        row.file_path,
        row.tags,
        row.created_at,
        row.expires_at,
        row.job_id,
        row.node_id,
        row.output_type,
      );
      // An output committed without a fence changes its job's view too (the fenced update above bumped it).
      if (!fence && row.job_id !== null) await unfenced(tx, row.job_id);
      // Over a blob row this made, the asset is what was written: no read back. Over one that was
      // there already, its hash and size are that row's (one made before its hash was known has none).
      if (blobCreated) return { asset: toAsset({ ...row, hash: blob.hash, size: blob.size }), blob_created: true };
      const [stored] = (await committed(tx, asset.id)).rows;
      if (stored === undefined) throw new Error(`asset ${asset.id}: not found after its insert`);
      return { asset: toAsset(stored), blob_created: false };
    });
}
