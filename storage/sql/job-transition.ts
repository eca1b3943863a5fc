// JobStore.transitionJob and saveProgress over kysely. Every status change is
// one conditional UPDATE (`... WHERE status = from`) whose row count says who
// won, so instances sharing a database never both move a job. Every job runs
// both (its progress, its end), so each shape of the UPDATE (which columns a
// patch sets, which guards it checks) is compiled once (query-template.ts).
import { type Kysely, sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import { stringifyJson } from '../../lib/json.ts';
import type { JobStore, JobSummary } from '../types.ts';
import { type Executor, statementTemplate, templateFamily } from './query-template.ts';
import { type QueueCounts, queueDelta } from './queue-counts.ts';
import { idsToText, JOB_SUMMARY_COLUMNS, toJobSummary } from './rows.ts';
import type { Database } from './schema.ts';
import { insertWebhookDeliveries } from './webhook-outbox-store.ts';

/** Progress after a job has left these statuses would overwrite a final snapshot. */
const PROGRESS_STATUSES = ['running', 'canceling'];

const json = (v: Record<string, unknown> | null) => (v === null ? null : stringifyJson(v));

type Update = UpdateQueryBuilder<Database, 'jobs', 'jobs', UpdateResult>;
type Move = (executor: Executor, values: unknown[]) => Promise<JobSummary | null>;

export function createSqlJobTransitions(db: Kysely<Database>, counts: QueueCounts): Pick<JobStore, 'transitionJob' | 'saveProgress'> {
  /**
   * The move of one shape: `columns` set (the values come first, in that order,
   * after `to`), then `attempts` added to when `add`, the lease released when
   * `release`; the values of `id`, `from` and the guards follow.
   */
  const moves = templateFamily<Move>((shape) => {
    const [list, flags] = shape.split('|');
    const columns = list === '' ? [] : list.split(',');
    const [add, release, token, before] = [...'artb'].map((f) => flags.includes(f));
    const arity = 1 + columns.length + (add ? 1 : 0) + 2 + (token ? 1 : 0) + (before ? 1 : 0);
    const run = statementTemplate(arity, (...values: unknown[]) => {
      let i = 0;
      const set: Record<string, unknown> = { status: values[i++] };
      for (const c of columns) set[c] = values[i++];
      if (add) set.attempts = sql`attempts + ${values[i++]}`;
      // A released lease fences out its holder at once, not only once the job is claimed again.
      if (release) Object.assign(set, { lease_owner: null, lease_expires_at: null, lease_token: sql<number>`lease_token + 1` });
      let query: Update = db
        .updateTable('jobs')
        .set(set)
        .where('id', '=', values[i++] as string)
        .where('status', '=', values[i++] as string);
      if (token) query = query.where('lease_token', '=', values[i++] as number);
      if (before) {
        const at = values[i++] as number;
        query = query.where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', at)]));
      }
      // The row as moved: its status stream shows it without a read of its own (core/jobs/events.ts).
      return query.returning(JOB_SUMMARY_COLUMNS);
    });
    return async (executor, values) => {
      const [row] = (await run(executor, ...values)).rows;
      return row ? toJobSummary(row) : null;
    };
  });

  const progressShapes = templateFamily((shape) =>
    statementTemplate(shape.length + 2, (...values: unknown[]) => {
      let i = 0;
      const set: Record<string, unknown> = { progress: values[i++] };
      if (shape.includes('r')) set.outputs_reused = values[i++];
      let query: Update = db
        .updateTable('jobs')
        .set(set)
        .where('id', '=', values[i++] as string)
        .where('status', 'in', PROGRESS_STATUSES);
      if (shape.includes('t')) query = query.where('lease_token', '=', values[i++] as number);
      return query;
    }),
  );

  return {
    async transitionJob(id, from, to, patch = {}, guard = {}) {
      const { add_attempts, progress, error, outputs_reused, cached_nodes, temp_asset_ids, lease, outbox, ...times } = patch;
      // Only keys present in the patch change; an explicit null clears.
      const columns: string[] = [];
      const values: unknown[] = [to];
      const column = (name: string, value: unknown) => {
        columns.push(name);
        values.push(value);
      };
      for (const [k, v] of Object.entries(times)) if (v !== undefined) column(k, v);
      if (progress !== undefined) column('progress', json(progress));
      if (error !== undefined) column('error', json(error));
      if (outputs_reused !== undefined) column('outputs_reused', outputs_reused ? 1 : 0);
      if (cached_nodes !== undefined) column('cached_nodes', idsToText(cached_nodes));
      if (temp_asset_ids !== undefined) column('temp_asset_ids', idsToText(temp_asset_ids));
      let flags = '';
      if (add_attempts) (flags += 'a'), values.push(add_attempts);
      if (lease === null) flags += 'r';
      values.push(id, from);
      if (guard.lease_token !== undefined) (flags += 't'), values.push(guard.lease_token);
      if (guard.lease_expired_before !== undefined) (flags += 'b'), values.push(guard.lease_expired_before);
      const move = moves(`${columns.join(',')}|${flags}`);

      // Into or out of the queue, or with deliveries to write: the move, the account's
      // queue count and the deliveries commit together or not at all.
      const delta = queueDelta(from, to);
      if (delta !== 0 || (outbox !== undefined && outbox.length > 0)) {
        return db.transaction().execute(async (tx) => {
          const moved = await move(tx, values);
          if (moved === null) return null;
          await counts.adjust(tx, moved.account_id, delta);
          if (outbox !== undefined && outbox.length > 0) await insertWebhookDeliveries(tx, outbox);
          return moved;
        });
      }
      return move(db, values);
    },

    async saveProgress(id, progress, outputsReused, leaseToken) {
      const values: unknown[] = [stringifyJson(progress)];
      let shape = '';
      if (outputsReused !== undefined) (shape += 'r'), values.push(outputsReused ? 1 : 0);
      values.push(id);
      if (leaseToken !== undefined) (shape += 't'), values.push(leaseToken);
      await progressShapes(shape)(db, ...values);
    },
  };
}
