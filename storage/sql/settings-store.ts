// SettingsStore over kysely: one row per key in `settings`.
import type { Kysely } from 'kysely';
import type { SettingsStore } from '../types.ts';
import type { Database } from './schema.ts';

export function createSqlSettingsStore(db: Kysely<Database>): SettingsStore {
  return {
    async getSetting(key) {
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
      return row?.value ?? null;
    },
    async initSetting(key, value) {
      // Insert-if-absent, then read back: of racing writers (other instances
      // too) the first insert wins and every caller gets the stored value.
      await db
        .insertInto('settings')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
      return row.value;
    },
    async putSetting(key, value) {
      await db
        .insertInto('settings')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
        .execute();
    },
  };
}
