// EngineServerStore over kysely, composed into the SQL metadata store: one
// row per registered server in `engine_servers` (migration 0014), unique per
// deployment and URL. An add races safely with another process's add of the
// same URL: the insert does nothing on the unique key, and both read the one
// row that won.
import type { Kysely, Selectable } from 'kysely';
import { type EngineServerRecord, type EngineServerState, type EngineServerStore, normalizeServerUrl } from '../types.ts';
import { type Database, type EngineServersTable, toNumber } from './schema.ts';

function record(row: Selectable<EngineServersTable>): EngineServerRecord {
  return {
    id: row.id,
    deployment: row.deployment,
    url: row.url,
    state: row.state as EngineServerState,
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

export function createSqlEngineServerStore(db: Kysely<Database>): EngineServerStore {
  const byId = (id: string) => db.selectFrom('engine_servers').selectAll().where('id', '=', id).executeTakeFirst();

  return {
    async listEngineServers(deployment) {
      const rows = await db
        .selectFrom('engine_servers')
        .selectAll()
        .where('deployment', '=', deployment)
        .orderBy('created_at')
        .orderBy('url')
        .execute();
      return rows.map(record);
    },
    async getEngineServer(id) {
      const row = await byId(id);
      return row ? record(row) : null;
    },
    async addEngineServer({ id, deployment, url, now }) {
      const normal = normalizeServerUrl(url);
      return db.transaction().execute(async (tx) => {
        await tx
          .insertInto('engine_servers')
          .values({ id, deployment, url: normal, state: 'active', created_at: now, updated_at: now })
          .onConflict((oc) => oc.columns(['deployment', 'url']).doNothing())
          .execute();
        // Reactivates a draining one (a no-op on the row just inserted, which is active).
        await tx
          .updateTable('engine_servers')
          .set({ state: 'active', updated_at: now })
          .where('deployment', '=', deployment)
          .where('url', '=', normal)
          .where('state', '=', 'draining')
          .execute();
        const row = await tx
          .selectFrom('engine_servers')
          .selectAll()
          .where('deployment', '=', deployment)
          .where('url', '=', normal)
          .executeTakeFirstOrThrow();
        return { server: record(row), created: row.id === id };
      });
    },
    async setEngineServerState(id, state, now) {
      // updated_at moves only with a change, as in memory.
      await db.updateTable('engine_servers').set({ state, updated_at: now }).where('id', '=', id).where('state', '<>', state).execute();
      const row = await byId(id);
      return row ? record(row) : null;
    },
    async removeEngineServer(id) {
      const row = await db.deleteFrom('engine_servers').where('id', '=', id).returningAll().executeTakeFirst();
      return row ? record(row) : null;
    },
  };
}
