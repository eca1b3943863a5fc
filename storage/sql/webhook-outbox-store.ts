// WebhookOutboxStore over kysely, composed into the SQL metadata store. A
// claim is one conditional UPDATE per candidate (`... WHERE attempts = seen
// AND no live claim`) whose row count says who won, so senders on several
// instances never both send one attempt. The job and video task stores write
// rows through insertWebhookDeliveries inside their own transactions.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { NewWebhookDelivery, WebhookDelivery, WebhookDeliveryState, WebhookOutboxStore } from '../types.ts';
import { type Database, toNumber } from './schema.ts';

const ENDED = ['delivered', 'dead'];

const nullableNumber = (v: number | string | bigint | null) => (v === null ? null : toNumber(v));

const toDelivery = (r: Selectable<Database['webhook_deliveries']>): WebhookDelivery => ({
  ...r,
  seq: Number(r.seq),
  state: r.state as WebhookDeliveryState,
  attempts: Number(r.attempts),
  next_attempt_at: toNumber(r.next_attempt_at),
  claimed_until: nullableNumber(r.claimed_until),
  created_at: toNumber(r.created_at),
  ended_at: nullableNumber(r.ended_at),
});

/** Inserts new pending rows, due at once; ids already there are left alone. */
export async function insertWebhookDeliveries(db: Kysely<Database> | Transaction<Database>, rows: readonly NewWebhookDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('webhook_deliveries')
    .values(rows.map((r) => ({ ...r, state: 'pending', attempts: 0, next_attempt_at: r.created_at })))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export function createSqlWebhookOutboxStore(db: Kysely<Database>): WebhookOutboxStore {
  return {
    enqueueWebhookDeliveries: (rows) => insertWebhookDeliveries(db, rows),

    async claimWebhookDeliveries({ owner, now, lease_ms, limit }) {
      if (limit <= 0) return [];
      const candidates = await db
        .selectFrom('webhook_deliveries as d')
        .select(['d.id', 'd.attempts'])
        .where('d.state', '=', 'pending')
        .where('d.next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<=', now)]))
        // In order per subject and endpoint: an earlier pending row (in flight or waiting for its retry) holds the later ones back.
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('webhook_deliveries as e')
                .select('e.id')
                .whereRef('e.subject', '=', 'd.subject')
                .whereRef('e.endpoint', '=', 'd.endpoint')
                .where('e.state', '=', 'pending')
                .whereRef('e.seq', '<', 'd.seq'),
            ),
          ),
        )
        .orderBy('d.next_attempt_at')
        .orderBy('d.created_at')
        .orderBy('d.id')
        .limit(limit)
        .execute();
      const claimed: WebhookDelivery[] = [];
      for (const c of candidates) {
        const row = await db
          .updateTable('webhook_deliveries')
          .set({ attempts: Number(c.attempts) + 1, claimed_by: owner, claimed_until: now + lease_ms })
          .where('id', '=', c.id)
          .where('state', '=', 'pending')
          .where('attempts', '=', Number(c.attempts))
          .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
          .returningAll()
          .executeTakeFirst();
        if (row) claimed.push(toDelivery(row));
      }
      return claimed;
    },

    async settleWebhookDelivery(id, { owner, attempts }, outcome) {
      const released = { claimed_by: null, claimed_until: null };
      const set =
        outcome.state === 'delivered'
          ? { ...released, state: 'delivered', ended_at: outcome.at, last_error: null }
          : outcome.state === 'dead'
            ? { ...released, state: 'dead', ended_at: outcome.at, last_error: outcome.error }
            : {
                ...released,
                next_attempt_at: outcome.next_attempt_at,
                last_error: outcome.error,
                ...(outcome.payload !== undefined && { payload: outcome.payload }),
                ...(outcome.untried === true && { attempts: attempts - 1 }),
              };
      const result = await db
        .updateTable('webhook_deliveries')
        .set(set)
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where('claimed_by', '=', owner)
        .where('attempts', '=', attempts)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async nextWebhookAttemptAfter(now) {
      const { next } = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.min('next_attempt_at').as('next'))
        .where('state', '=', 'pending')
        .where('next_attempt_at', '>', now)
        .executeTakeFirstOrThrow();
      return next === null || next === undefined ? null : toNumber(next as number | string | bigint);
    },

    async listWebhookDeliveries({ subject, limit }) {
      let query = db.selectFrom('webhook_deliveries').selectAll();
      if (subject !== undefined) query = query.where('subject', '=', subject);
      const rows = await query.orderBy('created_at').orderBy('seq').orderBy('id').limit(limit).execute();
      return rows.map(toDelivery);
    },

    async deleteEndedWebhookDeliveries(before, limit) {
      // Select then delete by id: LIMIT on DELETE is not portable SQL.
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('state', 'in', ENDED)
        .where('ended_at', '<=', before)
        .limit(limit)
        .execute();
      if (rows.length === 0) return 0;
      const result = await db
        .deleteFrom('webhook_deliveries')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .where('state', 'in', ENDED)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
