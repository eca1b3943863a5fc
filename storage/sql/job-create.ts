// JobStore.createJob over kysely: the job insert, its `seq`, and the queue
// bounds checked in the same transaction.
//
// `seq` comes from a `counters` row bumped with INSERT ... ON CONFLICT DO
// UPDATE ... RETURNING in the job insert's transaction. Why not the others:
// - `max(seq)+1` races on PostgreSQL (two transactions read the same max);
// - autoincrement is spelled differently per dialect, and SQLite's only
//   works on an INTEGER PRIMARY KEY (ours is the text id);
// - a PostgreSQL sequence hands out numbers outside the transaction, so a
//   lower seq can commit after a higher one, and a FIFO reader that has seen
//   seq N could later discover N-1.
// The counter row stays locked until the insert commits, so seqs are unique
// and become visible in increasing order; the price, one serialised row per
// submission, is small next to running a workflow.
//
// The same turn makes the queue bounds exact across instances: every insert
// reads the queue counts (queue-counts.ts) after it has taken the row
// (PostgreSQL's READ COMMITTED reads each statement anew, so it sees every
// insert that held the row before), and inserts only under the bounds.
// Other moves change the counts meanwhile without that row: claims lower
// them, and a job taken back from a lost runner is queued again past the
// bound (it was admitted once), as it was when the queue itself was counted.
import type { Kysely } from 'kysely';
import { stringifyJson } from '../../lib/json.ts';
import { type BoundedJob, FRESH_JOB, type JobSummary, type NewJob, type QueueBounds, type QueueRefusal } from '../types.ts';
import { statementTemplate, type Transact } from './query-template.ts';
import { type QueueCounts, queueDelta } from './queue-counts.ts';
import { type Database, toNumber } from './schema.ts';

const JOB_SEQ = 'job_seq';

const json = (v: Record<string, unknown> | null) => (v === null ? null : stringifyJson(v));

type CreateJob = {
  (job: NewJob): Promise<JobSummary>;
  (job: NewJob, bounds: QueueBounds): Promise<BoundedJob | QueueRefusal>;
};

export function createSqlJobInsert(db: Kysely<Database>, counts: QueueCounts, transact: Transact): CreateJob {
  // Every submission runs these; compiled once (query-template.ts).
  const nextSeq = statementTemplate(0, () =>
    db
      .insertInto('counters')
      .values({ name: JOB_SEQ, value: 1 })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb('counters.value', '+', 1) })))
      .returning('value'),
  );
  const insert = statementTemplate(
    9,
    (
      id: string,
      account_id: string,
      status: string,
      created_at: number,
      expires_at: number,
      seq: number,
      priority: number,
      metadata: string | null,
      workflow: string,
    ) =>
      db.insertInto('jobs').values({
        id,
        account_id,
        status,
        created_at,
        expires_at,
        seq,
        ...FRESH_JOB,
        priority,
        metadata,
        outputs_reused: 0,
        workflow,
      }),
  );

  function createJob(job: NewJob): Promise<JobSummary>;
  function createJob(job: NewJob, bounds: QueueBounds): Promise<BoundedJob | QueueRefusal>;
  async function createJob(job: NewJob, bounds: QueueBounds = {}): Promise<BoundedJob | QueueRefusal> {
    // Serialised before the transaction: nothing of it depends on what the transaction reads.
    const { priority = 0, metadata = null } = job;
    const workflowText = stringifyJson(job.workflow);
    const metadataText = json(metadata);
    let before: number | undefined;
    const created = await transact(async (tx): Promise<number | QueueRefusal> => {
      const [{ value }] = (await nextSeq(tx)).rows;
      const { maxQueued, maxQueuedPerAccount } = bounds;
      // A refusal leaves the transaction by returning, not throwing: the counter's bump is
      // committed with it, a gap in seq that nothing reads as a missing job.
      if (maxQueued !== undefined && maxQueuedPerAccount !== undefined) {
        const { all, own } = await counts.both(tx, job.account_id);
        if (all >= maxQueued) return { refused: 'queue', queued: all, limit: maxQueued };
        if (own >= maxQueuedPerAccount) return { refused: 'account', queued: own, limit: maxQueuedPerAccount };
        before = all;
      } else if (maxQueued !== undefined) {
        const n = await counts.count(tx);
        if (n >= maxQueued) return { refused: 'queue', queued: n, limit: maxQueued };
        before = n;
      } else if (maxQueuedPerAccount !== undefined) {
        const n = await counts.count(tx, job.account_id);
        if (n >= maxQueuedPerAccount) return { refused: 'account', queued: n, limit: maxQueuedPerAccount };
      }
      const seq = toNumber(value);
      await insert(tx, job.id, job.account_id, job.status, job.created_at, job.expires_at, seq, priority, metadataText, workflowText);
      await counts.adjust(tx, job.account_id, queueDelta(null, job.status));
      return seq;
    });
    if (typeof created !== 'number') return created;
    // The row as stored (a read gives the same), built field by field rather than spread
    // from the caller's object; its metadata is copied, since the stored row does not alias it.
    const row: BoundedJob = {
      id: job.id,
      account_id: job.account_id,
      status: job.status,
      seq: created,
      created_at: job.created_at,
      ...FRESH_JOB,
      expires_at: job.expires_at,
      priority,
      metadata: metadata === null ? null : structuredClone(metadata),
      outputs_reused: false,
      cached_nodes: null,
      temp_asset_ids: [],
      lease: null,
      view_version: 0,
    };
    if (before !== undefined) row.queued_before = before;
    return row;
  }
  return createJob;
}
