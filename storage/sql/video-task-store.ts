// VideoTaskStore over kysely, composed into the SQL metadata store. A state
// change is one conditional UPDATE (`... WHERE state = from`) whose row count
// says who won, as for jobs; a change's callback row is written in the same
// transaction.
import type { Kysely, Selectable, Updateable } from 'kysely';
import type { VideoTaskRecord, VideoTaskStore } from '../types.ts';
import { type Database, toNumber, type VideoTasksTable } from './schema.ts';
import { insertWebhookDeliveries } from './webhook-outbox-store.ts';

const toTask = (r: Selectable<Database['video_tasks']>): VideoTaskRecord => ({
  ...r,
  request: JSON.parse(r.request) as Record<string, unknown>,
  credits: toNumber(r.credits),
  error: r.error === null ? null : (JSON.parse(r.error) as Record<string, unknown>),
  created_at: toNumber(r.created_at),
  updated_at: toNumber(r.updated_at),
  expires_at: toNumber(r.expires_at),
});

export function createSqlVideoTaskStore(db: Kysely<Database>): VideoTaskStore {
  return {
    async createVideoTask(task) {
      await db
        .insertInto('video_tasks')
        .values({ ...task, request: JSON.stringify(task.request), error: task.error === null ? null : JSON.stringify(task.error) })
        .execute();
    },
    async getVideoTask(accountId, id) {
      const row = await db.selectFrom('video_tasks').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return row ? toTask(row) : null;
    },
    async transitionVideoTask(id, from, to, patch) {
      const set: Updateable<VideoTasksTable> = { state: to, updated_at: patch.updated_at };
      // Only keys present in the patch change; an explicit null clears.
      if (patch.provider_task_id !== undefined) set.provider_task_id = patch.provider_task_id;
      if (patch.output_asset_id !== undefined) set.output_asset_id = patch.output_asset_id;
      if (patch.error !== undefined) set.error = patch.error === null ? null : JSON.stringify(patch.error);
      const move = async (q: Kysely<Database>) =>
        Number((await q.updateTable('video_tasks').set(set).where('id', '=', id).where('state', '=', from).executeTakeFirst()).numUpdatedRows) > 0;
      const outbox = patch.outbox ?? [];
      if (outbox.length === 0) return move(db);
      // The change and its callback commit together or not at all.
      return db.transaction().execute(async (tx) => {
        const moved = await move(tx);
        if (moved) await insertWebhookDeliveries(tx, outbox);
        return moved;
      });
    },
    async listVideoTasksByState(states, limit) {
      // `IN ()` is a syntax error on PostgreSQL, so an empty set never reaches SQL.
      if (states.length === 0) return [];
      const rows = await db
        .selectFrom('video_tasks')
        .selectAll()
        .where('state', 'in', states)
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toTask);
    },
    async deleteExpiredVideoTasks(now, limit) {
      // Select then delete by id: LIMIT on DELETE is not portable SQL.
      const rows = await db.selectFrom('video_tasks').select('id').where('expires_at', '<=', now).limit(limit).execute();
      if (rows.length === 0) return [];
      const ids = rows.map((r) => r.id);
      await db.deleteFrom('video_tasks').where('id', 'in', ids).where('expires_at', '<=', now).execute();
      return ids;
    },
  };
}
