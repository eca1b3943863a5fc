// In-process WorkerSlotStore over a map, for one process (tests, examples).
// Every method checks and writes without an await in between, so a claim is
// atomic on the event loop, as the SQL store's transaction is across
// processes. Semantics mirror storage/sql/worker-slot-store.ts.
import type { WorkerSlotStore } from '../types.ts';

interface Slot {
  worker: string;
  job_id: string;
  owner: string;
  expires_at: number;
}

export function createMemoryWorkerSlotStore(): WorkerSlotStore {
  const slots = new Map<string, Slot>();
  const keyOf = (worker: string, jobId: string) => JSON.stringify([worker, jobId]);

  return {
    async claim({ worker, capacity, job_id, owner, now, lease_ms }) {
      if (capacity <= 0) return false;
      for (const [key, s] of slots) if (s.worker === worker && s.expires_at <= now) slots.delete(key);
      let others = 0;
      for (const s of slots.values()) if (s.worker === worker && s.job_id !== job_id) others++;
      if (others >= capacity) return false;
      slots.set(keyOf(worker, job_id), { worker, job_id, owner, expires_at: now + lease_ms });
      return true;
    },
    async renew({ worker, job_id, owner, now, until }) {
      const s = slots.get(keyOf(worker, job_id));
      if (!s || s.owner !== owner || s.expires_at <= now) return false;
      s.expires_at = until;
      return true;
    },
    async release({ worker, job_id, owner }) {
      const key = keyOf(worker, job_id);
      if (slots.get(key)?.owner === owner) slots.delete(key);
    },
    async holder(jobId) {
      let found: Slot | null = null;
      for (const s of slots.values()) if (s.job_id === jobId && (!found || s.expires_at > found.expires_at)) found = s;
      return found?.worker ?? null;
    },
  };
}
