// IdempotencyStore over kysely: one `idempotency_keys` row per (account, key).
import type { Kysely } from 'kysely';
import type { IdempotencyStore } from '../types.ts';
import type { Database } from './schema.ts';

export function createSqlIdempotencyStore(db: Kysely<Database>): IdempotencyStore {
  return {
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
  };
}
