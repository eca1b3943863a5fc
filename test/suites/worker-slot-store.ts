// WorkerSlotStore conformance: a worker's capacity held across claimers
// (also racing ones), a job's re-run taking over its own slot, renewals,
// releases only by the holder, expired slots freeing themselves, and which
// worker holds a job.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkerSlotClaim, WorkerSlotStore } from '../../storage/types.ts';
import type { MakeStore } from './store-fixtures.ts';
import { T0 } from './store-fixtures.ts';

const LEASE = 30_000;
const W1 = 'http://gpu-1:8188';
const W2 = 'http://gpu-2:8188';

const slot = (job_id: string, over: Partial<WorkerSlotClaim> = {}): WorkerSlotClaim => ({
  worker: W1,
  capacity: 1,
  job_id,
  owner: 'engine-a',
  now: T0,
  lease_ms: LEASE,
  ...over,
});

export function workerSlotStoreSuite(name: string, make: MakeStore<WorkerSlotStore>): void {
  describe(`WorkerSlotStore conformance: ${name}`, () => {
    let store: WorkerSlotStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it("claim takes up to the worker's capacity, per worker; none with capacity 0", async () => {
      expect(await store.claim(slot('a'))).toBe(true);
      expect(await store.claim(slot('b', { owner: 'engine-b' }))).toBe(false);
      expect(await store.claim(slot('b', { capacity: 2, owner: 'engine-b' }))).toBe(true);
      expect(await store.claim(slot('c', { capacity: 2 }))).toBe(false);
      expect(await store.claim(slot('c', { worker: W2 }))).toBe(true);
      expect(await store.claim(slot('d', { worker: 'http://gpu-3:8188', capacity: 0 }))).toBe(false);
      expect(await store.holder('d')).toBeNull();
    });

    it("a job's own slot does not count against the worker: its re-run takes it over, and the old holder's release leaves it", async () => {
      expect(await store.claim(slot('a'))).toBe(true);
      expect(await store.claim(slot('a', { owner: 'engine-b', now: T0 + 1 }))).toBe(true);
      expect(await store.holder('a')).toBe(W1);
      await store.release({ worker: W1, job_id: 'a', owner: 'engine-a' });
      expect(await store.renew({ worker: W1, job_id: 'a', owner: 'engine-a', now: T0 + 2, until: T0 + LEASE * 2 })).toBe(false);
      expect(await store.claim(slot('b', { owner: 'engine-a', now: T0 + 2 }))).toBe(false);
      await store.release({ worker: W1, job_id: 'a', owner: 'engine-b' });
      expect(await store.holder('a')).toBeNull();
      expect(await store.claim(slot('b', { now: T0 + 3 }))).toBe(true);
    });

    it('expired slots free the worker; a renewed one holds it past its first lease', async () => {
      expect(await store.claim(slot('a'))).toBe(true);
      expect(await store.claim(slot('b', { worker: W2 }))).toBe(true);
      expect(await store.renew({ worker: W2, job_id: 'b', owner: 'engine-a', now: T0 + 1000, until: T0 + LEASE * 3 })).toBe(true);
      // Another owner cannot renew it.
      expect(await store.renew({ worker: W2, job_id: 'b', owner: 'engine-b', now: T0 + 1000, until: T0 + LEASE * 9 })).toBe(false);
      const later = T0 + LEASE;
      expect(await store.claim(slot('c', { owner: 'engine-b', now: later }))).toBe(true);
      expect(await store.claim(slot('d', { worker: W2, owner: 'engine-b', now: later }))).toBe(false);
      // An expired slot is not renewed back to life: another may hold the worker by now.
      expect(await store.renew({ worker: W1, job_id: 'a', owner: 'engine-a', now: later, until: later + LEASE })).toBe(false);
      expect(await store.claim(slot('d', { worker: W2, owner: 'engine-b', now: T0 + LEASE * 3 }))).toBe(true);
    });

    it("holder names the job's worker, also after its slot expired, until a claim on that worker drops it", async () => {
      expect(await store.holder('a')).toBeNull();
      expect(await store.claim(slot('a', { worker: W2 }))).toBe(true);
      expect(await store.holder('a')).toBe(W2);
      expect(await store.holder('b')).toBeNull();
      expect(await store.claim(slot('b', { now: T0 + LEASE * 2 }))).toBe(true);
      expect(await store.holder('a')).toBe(W2);
      expect(await store.claim(slot('c', { worker: W2, now: T0 + LEASE * 2 }))).toBe(true);
      expect(await store.holder('a')).toBeNull();
    });

    it('racing claims of one worker never exceed its capacity', async () => {
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.claim(slot(`j${i}`, { capacity: 2, owner: `engine-${i % 3}`, now: T0 + i }))),
      );
      expect(claims.filter(Boolean)).toHaveLength(2);
      const holders = await Promise.all(Array.from({ length: 8 }, (_, i) => store.holder(`j${i}`)));
      expect(holders.filter((h) => h === W1)).toHaveLength(2);
      expect(holders.filter((h) => h === null)).toHaveLength(6);
    });
  });
}
