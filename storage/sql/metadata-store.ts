// MetadataStore over kysely, dialect-neutral: only constructs SQLite and
// PostgreSQL share (ON CONFLICT, RETURNING, NOT EXISTS, IN subqueries with
// LIMIT), so the same code serves the embedded and the scale-out database.
// Job methods come from job-store.ts.
import type { Kysely } from 'kysely';
import type { MetadataStore } from '../types.ts';
import { createSqlJobStore } from './job-store.ts';
import type { DirectReader } from './query-template.ts';
import { migrateToLatest } from './migrations.ts';
import { live, selectAssets, unreferenced, toAccount, toAsset, toBlob } from './rows.ts';
import type { Database } from './schema.ts';
import { createSqlVideoTaskStore } from './video-task-store.ts';

const DEFAULT_TIER = 'default';

/** `direct`: how the dialect runs a hot read without kysely's executor, if it can (see DirectReader). */
export function createSqlMetadataStore(db: Kysely<Database>, direct?: DirectReader): MetadataStore {
  let closed = false;

  return {
    ...createSqlJobStore(db, direct),
    ...createSqlVideoTaskStore(db),
    migrate: () => migrateToLatest(db),

    async getSetting(key) {
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
      return row?.value ?? null;
    },
    async initSetting(key, value) {
      await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
      return row.value;
    },

    async upsertAccount({ id, tier }) {
      await db
        .insertInto('accounts')
        .values({ id, tier: tier ?? DEFAULT_TIER, created_at: Date.now() })
        .onConflict((oc) => (tier === undefined ? oc.column('id').doNothing() : oc.column('id').doUpdateSet({ tier })))
        .execute();
      return toAccount(await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    },
    async replaceApiKeys(keys) {
      await db.transaction().execute(async (tx) => {
        await tx.deleteFrom('api_keys').execute();
        const now = Date.now();
        // One row per hash: a hash configured twice belongs to the last account naming it.
        const rows = new Map(keys.map((k) => [k.key_hash, { key_hash: k.key_hash, account_id: k.account_id, created_at: now }]));
        if (rows.size > 0) await tx.insertInto('api_keys').values([...rows.values()]).execute();
      });
    },
    async findAccountByKeyHash(keyHash) {
      const row = await db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .selectAll('accounts')
        .where('api_keys.key_hash', '=', keyHash)
        .executeTakeFirst();
      return row ? toAccount(row) : null;
    },

    async claimIdempotencyKey(accountId, key, now, expiresAt) {
      // One statement, so two racing claims cannot both win: the row is
      // inserted, or replaced only when the existing claim has expired.
      const result = await db
        .insertInto('idempotency_keys')
        .values({ account_id: accountId, key, created_at: now, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .columns(['account_id', 'key'])
            .doUpdateSet((eb) => ({ created_at: eb.ref('excluded.created_at'), expires_at: eb.ref('excluded.expires_at') }))
            .where('idempotency_keys.expires_at', '<=', (eb) => eb.ref('excluded.created_at')),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async releaseIdempotencyKey(accountId, key) {
      await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).execute();
    },
    async deleteExpiredIdempotencyKeys(now) {
      const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async commitAsset(blob, asset) {
      return db.transaction().execute(async (tx) => {
        const inserted = await tx
          .insertInto('blobs')
          .values({ key: blob.key, hash: blob.hash, size: blob.size, created_at: Date.now() })
          .onConflict((oc) => oc.column('key').doNothing())
          .executeTakeFirst();
        await tx
          .insertInto('assets')
          .values({ ...asset, node_id: asset.node_id ?? null, output_type: asset.output_type ?? null, tags: JSON.stringify(asset.tags) })
          .execute();
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
      const row = await selectAssets(db)
        .where('assets.id', '=', id)
        .where('assets.account_id', '=', accountId)
        .where(live(now))
        .executeTakeFirst();
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
    async deleteAsset(accountId, id, now) {
      const result = await db
        .deleteFrom('assets')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where(live(now))
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async blockBlob(key, reason, now) {
      return db.transaction().execute(async (tx) => {
        await tx
          .insertInto('blocked_blobs')
          .values({ key, reason, created_at: now })
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
        const rows = await tx.deleteFrom('assets').where('blob_key', '=', key).returning('id').execute();
        return rows.map((r) => r.id);
      });
    },
    async isBlobBlocked(key) {
      return (await db.selectFrom('blocked_blobs').select('key').where('key', '=', key).executeTakeFirst()) !== undefined;
    },

    async deleteExpiredAssets(now, limit) {
      // DELETE ... LIMIT is not portable; an IN subquery with LIMIT is. RETURNING
      // reports only rows this statement removed, so two sweepers never double-count.
      const rows = await db
        .deleteFrom('assets')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('assets')
            .select('id')
            .where('expires_at', '<=', now)
            .orderBy('expires_at')
            .limit(limit),
        )
        .where('expires_at', '<=', now)
        .returning('blob_key')
        .execute();
      return rows.map((r) => r.blob_key);
    },
    async listUnreferencedBlobs(limit) {
      const rows = await db
        .selectFrom('blobs')
        .select('key')
        .where(unreferenced)
        .orderBy('created_at')
        .orderBy('key')
        .limit(limit)
        .execute();
      return rows.map((r) => r.key);
    },
    async deleteBlobIfUnreferenced(key) {
      // One statement: an asset committed concurrently either blocks the delete or fails its FK.
      const result = await db
        .deleteFrom('blobs')
        .where('key', '=', key)
        .where(unreferenced)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
