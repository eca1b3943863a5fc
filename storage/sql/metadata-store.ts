// The MetadataStore over kysely: one store per concern (settings, accounts,
// idempotency, assets, jobs, video tasks, the webhook outbox, worker slots,
// engine servers, lifecycle), composed
// over one database. Dialect-neutral: every store uses only constructs SQLite and
// PostgreSQL share (ON CONFLICT, RETURNING, NOT EXISTS, IN subqueries with
// LIMIT), so the same code serves the embedded and the scale-out database.
import type { Kysely } from 'kysely';
import type { MetadataStore } from '../types.ts';
import { createSqlAccountStore } from './account-store.ts';
import { createSqlAssetStore } from './asset-store.ts';
import { createSqlEngineServerStore } from './engine-server-store.ts';
import { createSqlIdempotencyStore } from './idempotency-store.ts';
import { createSqlJobStore } from './job-store.ts';
import { createSqlLifecycle } from './lifecycle.ts';
import type { DirectReader, Transact } from './query-template.ts';
import type { Database } from './schema.ts';
import { createSqlSettingsStore } from './settings-store.ts';
import { createSqlVideoTaskStore } from './video-task-store.ts';
import { createSqlWebhookOutboxStore } from './webhook-outbox-store.ts';
import { createSqlWorkerSlotStore } from './worker-slot-store.ts';

/**
 * `direct`: how the dialect runs a hot read without kysely's executor, if it
 * can (see DirectReader); `rowLocks`: the dialect has them (PostgreSQL);
 * `transact`: how it runs the hot transactions, if not as kysely's (see Transact).
 */
export function createSqlMetadataStore(
  db: Kysely<Database>,
  direct?: DirectReader,
  opts: { rowLocks?: boolean; transact?: Transact } = {},
): MetadataStore {
  return {
    ...createSqlLifecycle(db),
    ...createSqlSettingsStore(db),
    ...createSqlAccountStore(db, direct),
    ...createSqlIdempotencyStore(db),
    ...createSqlAssetStore(db, direct, opts.transact),
    ...createSqlJobStore(db, { direct, rowLocks: opts.rowLocks, transact: opts.transact }),
    ...createSqlVideoTaskStore(db),
    ...createSqlWebhookOutboxStore(db),
    workerSlots: createSqlWorkerSlotStore(db),
    engineServers: createSqlEngineServerStore(db),
  };
}
