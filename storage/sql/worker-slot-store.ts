// WorkerSlotStore over kysely, composed into the SQL metadata store: one row
// per held slot in `worker_slots`, keyed by worker and job.
//
// A claim counts the worker's live slots and inserts its own in one
// transaction, and the claims of one worker take turns on a `counters` row
// (as the claims of one account do in job-store.ts): its update locks the row
// on PostgreSQL, and the database on SQLite, until commit, so no two
// processes both see room for the last slot. Renewals, releases and reads
// need no turn: each is one statement on rows a claim only adds to or
// removes when they have expired.
import type { Kysely } from 'kysely';
import type { WorkerSlotStore } from '../types.ts';
import { type Database, toNumber } from './schema.ts';
import { takeTurn } from './take-turn.ts';

/** The `counters` row that one worker's claims take in turn. */
const slotCounter = (worker: string) => `worker-slots:${worker}`;

export function createSqlWorkerSlotStore(db: Kysely<Database>): WorkerSlotStore {
  return {
    async claim({ worker, capacity, job_id, owner, now, lease_ms }) {
      if (capacity <= 0) return false;
      return db.transaction().execute(async (tx) => {
        // The server's claims take turns (take-turn.ts): the count below sees every earlier claim.
        await takeTurn(tx, slotCounter(worker));
        // Slots of processes that stopped renewing (gone, or cut off) hold nothing any more.
        await tx.deleteFrom('worker_slots').where('worker', '=', worker).where('expires_at', '<=', now).execute();
        const { n } = await tx
          .selectFrom('worker_slots')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('worker', '=', worker)
          .where('job_id', '<>', job_id)
          .executeTakeFirstOrThrow();
        if (toNumber(n as number | string | bigint) >= capacity) return false;
        await tx
          .insertInto('worker_slots')
          .values({ worker, job_id, owner, expires_at: now + lease_ms })
          .onConflict((oc) => oc.columns(['worker', 'job_id']).doUpdateSet({ owner, expires_at: now + lease_ms }))
          .execute();
        return true;
      });
    },
    async renew({ worker, job_id, owner, now, until }) {
      const result = await db
        .updateTable('worker_slots')
        .set({ expires_at: until })
        .where('worker', '=', worker)
        .where('job_id', '=', job_id)
        .where('owner', '=', owner)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async release({ worker, job_id, owner }) {
      await db.deleteFrom('worker_slots').where('worker', '=', worker).where('job_id', '=', job_id).where('owner', '=', owner).execute();
    },
    async holder(jobId) {
      const row = await db
        .selectFrom('worker_slots')
        .select('worker')
        .where('job_id', '=', jobId)
        .orderBy('expires_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row?.worker ?? null;
    },
  };
}
