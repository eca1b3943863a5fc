// AccountStore over kysely: `accounts`, and `api_keys` holding key hashes.
import type { Kysely } from 'kysely';
import type { AccountStore } from '../types.ts';
import { type DirectReader, queryTemplate } from './query-template.ts';
import { toAccount } from './rows.ts';
import type { Database } from './schema.ts';

const DEFAULT_TIER = 'default';

export function createSqlAccountStore(db: Kysely<Database>, direct?: DirectReader): AccountStore {
  // Every request that presents an API key runs this read: compiled once, and
  // run at once when the driver can (as GET /api/v2/jobs/{id}'s reads are).
  // Through kysely's executor it held SQLite's one connection across a dozen
  // promise hops, which sent the other requests' reads to the queue as well.
  // Still one read per request, nothing cached: a replaced key stops at once.
  const byKeyHash = queryTemplate(
    db,
    1,
    (keyHash: string) =>
      db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .selectAll('accounts')
        .where('api_keys.key_hash', '=', keyHash),
    direct,
  );
  return {
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
        if (rows.size > 0)
          await tx
            .insertInto('api_keys')
            .values([...rows.values()])
            .execute();
      });
    },
    async findAccountByKeyHash(keyHash) {
      const [row] = await byKeyHash(keyHash);
      return row ? toAccount(row) : null;
    },
  };
}
