// Schema migrations as code, run by kysely's Migrator from a static provider
// (bundlers and Lambda have no migration folder to read). Only schema-builder
// calls that mean the same on SQLite and PostgreSQL: text, bigint, composite
// primary keys, plain indexes and partial ones on `column = literal`. Never
// edit a shipped migration; add one.
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

export const migrations: Record<string, Migration> = {
  '0001_initial': {
    // Kysely<any>: a migration must keep compiling after later ones change the schema types.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      // No foreign key to accounts: accounts may be configured after keys are imported.
      await db.schema
        .createTable('api_keys')
        .addColumn('key_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
        .execute();
      // For deleteExpiredIdempotencyKeys; without it every sweep scans the table.
      await db.schema.createIndex('idempotency_keys_expires_at_idx').on('idempotency_keys').column('expires_at').execute();

      await db.schema
        .createTable('blobs')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('hash', 'text', (c) => c.unique())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      // The foreign key to blobs makes an asset over a blob row that a
      // concurrent collector just deleted fail loudly instead of dangling.
      await db.schema
        .createTable('assets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('blob_key', 'text', (c) => c.notNull().references('blobs.key'))
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('file_path', 'text')
        .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('job_id', 'text')
        .execute();
      await db.schema.createIndex('assets_account_blob_idx').on('assets').columns(['account_id', 'blob_key']).execute();
      await db.schema.createIndex('assets_expires_at_idx').on('assets').column('expires_at').execute();
      await db.schema.createIndex('assets_blob_key_idx').on('assets').column('blob_key').execute();

      // Content a scanner refused: kept after its blob is collected, so the same bytes stay refused.
      await db.schema
        .createTable('blocked_blobs')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      // Named counters bumped with an upsert ... RETURNING inside the writer's
      // transaction; the row lock orders concurrent writers (see sql/job-store.ts).
      await db.schema
        .createTable('counters')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'bigint', (c) => c.notNull())
        .execute();

      // JSON columns are text, not jsonb: the store only round-trips them,
      // and text means the same on both dialects.
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('workflow', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('started_at', 'bigint')
        .addColumn('completed_at', 'bigint')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('progress', 'text')
        .addColumn('error', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // The scheduler's scans: global FIFO per status, per-account FIFO, and the retention sweep.
      await db.schema.createIndex('jobs_status_seq_idx').on('jobs').columns(['status', 'seq']).execute();
      await db.schema.createIndex('jobs_account_status_seq_idx').on('jobs').columns(['account_id', 'status', 'seq']).execute();
      await db.schema.createIndex('jobs_expires_at_idx').on('jobs').column('expires_at').execute();
    },
    async down(db: Kysely<any>) {
      for (const table of ['jobs', 'counters', 'blocked_blobs', 'assets', 'blobs', 'idempotency_keys', 'api_keys', 'accounts', 'settings']) {
        await db.schema.dropTable(table).execute();
      }
    },
  },
};

migrations['0002_job_outputs'] = {
  // Outputs are assets; these say which node made one and of what kind, and
  // the index serves loading an input by name (LoadImage, /api/view).
  async up(db: Kysely<any>) {
    await db.schema.alterTable('assets').addColumn('node_id', 'text').execute();
    await db.schema.alterTable('assets').addColumn('output_type', 'text').execute();
    await db.schema.createIndex('assets_account_path_idx').on('assets').columns(['account_id', 'file_path']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('assets_account_path_idx').execute();
    await db.schema.alterTable('assets').dropColumn('output_type').execute();
    await db.schema.alterTable('assets').dropColumn('node_id').execute();
  },
};

migrations['0003_job_listings'] = {
  // An account's jobs newest first across statuses (history, the jobs list),
  // and a job's outputs by job id (listing them, filtering jobs by output kind).
  async up(db: Kysely<any>) {
    await db.schema.createIndex('jobs_account_seq_idx').on('jobs').columns(['account_id', 'seq']).execute();
    await db.schema.createIndex('assets_job_idx').on('assets').column('job_id').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('assets_job_idx').execute();
    await db.schema.dropIndex('jobs_account_seq_idx').execute();
  },
};

migrations['0004_video_tasks'] = {
  // Multi-frame video tasks: durable, so a restart resumes the unfinished
  // ones (the state index) and GET reads a task by id within its account.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('video_tasks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('credits', 'bigint', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('provider_task_id', 'text')
      .addColumn('link_base', 'text', (c) => c.notNull())
      .addColumn('output_asset_id', 'text')
      .addColumn('error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('video_tasks_state_created_idx').on('video_tasks').columns(['state', 'created_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('video_tasks').execute();
  },
};

migrations['0005_job_priority_metadata'] = {
  // What POST /api/v2/jobs adds to a job: its priority in the account's
  // queue, the caller's metadata, and whether the engine reused results.
  // The index serves the scheduler's pick (an account's queued jobs, higher
  // priority first, FIFO within one) and the account's part of
  // queue_position: the old (account_id, status, seq) order is no longer the
  // pick order, and sorting an account's whole queue on every pick would be.
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('jobs')
      .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('jobs').addColumn('metadata', 'text').execute();
    await db.schema
      .alterTable('jobs')
      .addColumn('outputs_reused', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('jobs_account_status_priority_seq_idx')
      .on('jobs')
      .columns(['account_id', 'status', 'priority desc', 'seq'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('jobs_account_status_priority_seq_idx').execute();
    for (const column of ['outputs_reused', 'metadata', 'priority']) await db.schema.alterTable('jobs').dropColumn(column).execute();
  },
};

migrations['0006_job_history'] = {
  // An account may take finished jobs out of its history (POST /history)
  // without deleting them: the job and its outputs stay reachable by id.
  async up(db: Kysely<any>) {
    await db.schema.alterTable('jobs').addColumn('history_hidden_at', 'bigint').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('jobs').dropColumn('history_hidden_at').execute();
  },
};

migrations['0007_job_run_record'] = {
  // What history shows of a run beyond its status: the nodes the engine
  // served from cache (execution_cached) and the temporary files (previews)
  // it made, which are no outputs of the job. JSON arrays of ids; null on
  // rows written before, read as "none".
  async up(db: Kysely<any>) {
    await db.schema.alterTable('jobs').addColumn('cached_nodes', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('temp_asset_ids', 'text').execute();
  },
  async down(db: Kysely<any>) {
    for (const column of ['temp_asset_ids', 'cached_nodes']) await db.schema.alterTable('jobs').dropColumn(column).execute();
  },
};

migrations['0008_job_leases'] = {
  // Runners sharing a database each hold the jobs they run under a lease
  // they renew; a job whose lease expired goes back to the queue. The token
  // grows with every claim and release and fences the run's writes.
  async up(db: Kysely<any>) {
    await db.schema.alterTable('jobs').addColumn('lease_owner', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('lease_expires_at', 'bigint').execute();
    await db.schema
      .alterTable('jobs')
      .addColumn('lease_token', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    // Live runners look for expired leases among running jobs.
    await db.schema.createIndex('jobs_status_lease_idx').on('jobs').columns(['status', 'lease_expires_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('jobs_status_lease_idx').execute();
    for (const column of ['lease_token', 'lease_expires_at', 'lease_owner']) await db.schema.alterTable('jobs').dropColumn(column).execute();
  },
};

migrations['0009_event_payloads'] = {
  // Messages of the PostgreSQL event bus too large for a NOTIFY (8000
  // bytes): a preview image, a long traceback. The NOTIFY names the row;
  // rows live a few seconds (pg-event-bus.ts removes them). SQLite, which
  // has no bus, leaves the table empty.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('event_payloads')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('event_payloads_created_at_idx').on('event_payloads').column('created_at').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('event_payloads').execute();
  },
};

migrations['0010_worker_slots'] = {
  // Slots on the engine servers that processes sharing the database claim
  // before they give a server a prompt (worker-slot-store.ts). Rows live
  // while a prompt runs; a process that dies leaves rows that expire.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('worker_slots')
      .addColumn('worker', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('worker_slots_pk', ['worker', 'job_id'])
      .execute();
    // A re-run asks which worker holds its job (holder).
    await db.schema.createIndex('worker_slots_job_id_idx').on('worker_slots').column('job_id').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('worker_slots').execute();
  },
};

migrations['0011_webhook_deliveries'] = {
  // The outbox of outgoing deliveries (webhooks of job events, video
  // callbacks; storage/interfaces/webhook-outbox-store.ts): written in the
  // transaction of the change they announce, claimed under a lease, kept
  // after they end until the sweep removes them.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('endpoint', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('payload', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('claimed_by', 'text')
      .addColumn('claimed_until', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('ended_at', 'bigint')
      .execute();
    // The senders' scan for due rows and the next due time; the sweep's scan for ended ones.
    await db.schema.createIndex('webhook_deliveries_state_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_state_ended_idx').on('webhook_deliveries').columns(['state', 'ended_at']).execute();
    // A row waits for the earlier pending rows of its subject and endpoint. Not
    // on endpoint: a URL can be longer than a PostgreSQL index entry may be.
    await db.schema.createIndex('webhook_deliveries_subject_idx').on('webhook_deliveries').columns(['subject', 'seq']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('webhook_deliveries').execute();
  },
};

migrations['0012_job_view_version'] = {
  // A count that every change of a job's outputs bumps (an output committed
  // or removed), so an instance may keep a finished job's view and check it
  // with one small read (JobStore.getJobStamp).
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('jobs')
      .addColumn('view_version', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('jobs').dropColumn('view_version').execute();
  },
};

migrations['0013_queue_counts'] = {
  // Each account's number of queued jobs, kept in the transaction of every
  // move into or out of `queued` (storage/sql/queue-counts.ts): the queue
  // bounds, the queue's size and the scheduler's accounts with queued jobs
  // read a few rows instead of counting or grouping the whole queue.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('queue_counts')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('queued', 'bigint', (c) => c.notNull())
      .execute();
    await db
      .insertInto('queue_counts')
      .columns(['account_id', 'queued'])
      .expression(
        db
          .selectFrom('jobs')
          .select((eb) => ['account_id', eb.fn.countAll().as('queued')])
          .where('status', '=', 'queued')
          .groupBy('account_id'),
      )
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('queue_counts').execute();
  },
};

migrations['0014_engine_servers'] = {
  // Engine servers an operator registered at run time (engine-server-store.ts),
  // one per URL of a deployment. `deployment` is 'default' until deployments
  // exist; it is in the key now so they come without another migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('engine_servers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('deployment', 'text', (c) => c.notNull().defaultTo('default'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('engine_servers_deployment_url_key', ['deployment', 'url'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('engine_servers').execute();
  },
};

migrations['0015_drop_job_lease_index'] = {
  // The (status, lease_expires_at) index of 0008 cost more than it saved:
  // a job's insert, claim and end each wrote a page of it (4 of the 23 pages
  // their three commits wrote to the WAL, measured on SQLite) and every lease
  // renewal rewrote its entry, while the one read it served, the runners'
  // look for expired leases among running and canceling jobs, finds those
  // few as well through (status, seq).
  async up(db: Kysely<any>) {
    await db.schema.dropIndex('jobs_status_lease_idx').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.createIndex('jobs_status_lease_idx').on('jobs').columns(['status', 'lease_expires_at']).execute();
  },
};

migrations['0016_queued_pick_index'] = {
  // The claim's pick order, (account_id, status, priority desc, seq), held an
  // entry for every job ever submitted, and every change of status moved one:
  // a claim and an end each deleted and inserted one. As a partial index over
  // queued jobs (queued-pick.ts) it takes an insert at submission and a
  // delete at the claim, and nothing after. Counts and listings by account
  // and status keep (account_id, status, seq).
  async up(db: Kysely<any>) {
    await db.schema.dropIndex('jobs_account_status_priority_seq_idx').execute();
    await db.schema
      .createIndex('jobs_queued_pick_idx')
      .on('jobs')
      .columns(['account_id', 'priority desc', 'seq'])
      .where(sql.ref('status'), '=', sql.lit('queued'))
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('jobs_queued_pick_idx').execute();
    await db.schema
      .createIndex('jobs_account_status_priority_seq_idx')
      .on('jobs')
      .columns(['account_id', 'status', 'priority desc', 'seq'])
      .execute();
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * Brings the schema to the latest version; throws the first migration error.
 * `schema` (PostgreSQL): where the migrator keeps its own tables, created if
 * absent; `db` then puts the migrations' tables there too (withSchema).
 */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  const { error } = await new Migrator({ db, provider, migrationTableSchema: schema }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
