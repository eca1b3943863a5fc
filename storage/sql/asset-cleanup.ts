// The AssetStore's removals that no request of the owner asks for: the
// sweep's (expired assets, then blob rows nothing references) and the
// scanner's (a blocked blob takes every account's assets over it). Each is
// one statement or one transaction, so two instances sweeping the same
// database never double-count or delete a blob an asset was just committed over.
import type { Kysely } from 'kysely';
import type { AssetStore } from '../types.ts';
import { type DirectReader, queryTemplate } from './query-template.ts';
import { bumpViews, unreferenced } from './rows.ts';
import type { Database } from './schema.ts';

type AssetCleanup = Pick<
  AssetStore,
  'blockBlob' | 'isBlobBlocked' | 'deleteExpiredAssets' | 'listUnreferencedBlobs' | 'deleteBlobIfUnreferenced' | 'knownBlobKeys'
>;

/** `direct`: runs the blocked check (asked before every output is stored) without kysely's executor when the dialect can. */
export function createSqlAssetCleanup(db: Kysely<Database>, direct?: DirectReader): AssetCleanup {
  const blocked = queryTemplate(db, 1, (key: string) => db.selectFrom('blocked_blobs').select('key').where('key', '=', key), direct);
  return {
    async blockBlob(key, reason, now) {
      return db.transaction().execute(async (tx) => {
        await tx
          .insertInto('blocked_blobs')
          .values({ key, reason, created_at: now })
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
        const rows = await tx.deleteFrom('assets').where('blob_key', '=', key).returning(['id', 'job_id']).execute();
        await bumpViews(
          tx,
          rows.map((r) => r.job_id),
        );
        return rows.map((r) => r.id);
      });
    },
    async isBlobBlocked(key) {
      return (await blocked(key)).length > 0;
    },

    async deleteExpiredAssets(now, limit) {
      // DELETE ... LIMIT is not portable; an IN subquery with LIMIT is. RETURNING
      // reports only rows this statement removed, so two sweepers never double-count.
      return db.transaction().execute(async (tx) => {
        const rows = await tx
          .deleteFrom('assets')
          .where('id', 'in', (eb) => eb.selectFrom('assets').select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit))
          .where('expires_at', '<=', now)
          .returning(['blob_key', 'job_id'])
          .execute();
        await bumpViews(
          tx,
          rows.map((r) => r.job_id),
        );
        return rows.map((r) => r.blob_key);
      });
    },
    async listUnreferencedBlobs(limit) {
      const rows = await db.selectFrom('blobs').select('key').where(unreferenced).orderBy('created_at').orderBy('key').limit(limit).execute();
      return rows.map((r) => r.key);
    },
    async deleteBlobIfUnreferenced(key) {
      // One statement: an asset committed concurrently either blocks the delete or fails its FK.
      const result = await db.deleteFrom('blobs').where('key', '=', key).where(unreferenced).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async knownBlobKeys(keys) {
      if (keys.length === 0) return [];
      const rows = await db.selectFrom('blobs').select('key').where('key', 'in', keys).execute();
      return rows.map((r) => r.key);
    },
  };
}
