// MetadataStore conformance, job stamps: the three columns that say whether a
// kept view of a finished job is still its view (core/jobs/view-cache.ts).
// Every change of a job's outputs must bump its view version, whichever
// store method makes it: a commit (fenced by the run's lease or not), a
// deletion by the owner, the sweep of expired assets, a blocked blob. And
// the store's commit mark, where it has one, moves with its writes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore } from '../../storage/types.ts';
import { blob, type MakeStore, newAsset, newJob, T0 } from './store-fixtures.ts';

export function jobStampSuite(make: MakeStore<MetadataStore>): void {
  describe('JobStore.getJobStamp', () => {
    let store: MetadataStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());
    const version = async (id = 'j') => (await store.getJobStamp('acc1', id))!.view_version;

    it("is the job's status and retention, and null for another account's job or none", async () => {
      await store.createJob(newJob('j'));
      expect(await store.getJobStamp('acc1', 'j')).toEqual({ status: 'queued', expires_at: T0 + 86_400_000, view_version: expect.any(Number) });
      expect(await store.getJobStamp('acc2', 'j')).toBeNull();
      expect(await store.getJobStamp('acc1', 'missing')).toBeNull();
      expect(await store.transitionJob('j', 'queued', 'canceled', { completed_at: T0 + 1 })).toMatchObject({ id: 'j', status: 'canceled' });
      expect(await store.getJobStamp('acc1', 'j')).toMatchObject({ status: 'canceled' });
    });

    it('moves with every output committed, fenced or not, and with no other job or asset', async () => {
      await store.createJob(newJob('j'));
      await store.createJob(newJob('other'));
      const v0 = await version();
      await store.commitAsset(blob('b1'), newAsset('o1', 'b1', { job_id: 'j' }));
      const v1 = await version();
      expect(v1).toBeGreaterThan(v0);
      // An upload (no job) and another job's output leave it as it is.
      await store.commitAsset(blob('b2'), newAsset('up', 'b2'));
      await store.commitAsset(blob('b3'), newAsset('o3', 'b3', { job_id: 'other' }));
      expect(await version()).toBe(v1);

      const lease = await store.claimJob({ account_id: 'acc1', limit: 2, owner: 'r', now: T0, lease_ms: 30_000 });
      expect(lease).not.toBeNull();
      const running = (await store.getJobById('j'))!.status === 'running' ? 'j' : 'other';
      const before = await version(running);
      const token = (await store.getJobById(running))!.lease!.token;
      await store.commitAsset(blob('b4'), newAsset('o4', 'b4', { job_id: running }), { job_id: running, lease_token: token });
      expect(await version(running)).toBeGreaterThan(before);
    });

    it('every read of the job carries the same version: 0 until an output is committed (views skip the output read then)', async () => {
      const created = await store.createJob(newJob('j'));
      expect(created.view_version).toBe(0);
      expect(await version()).toBe(0);
      const claimed = await store.claimJob({ account_id: 'acc1', limit: 1, owner: 'r', now: T0, lease_ms: 30_000 });
      expect(claimed?.view_version).toBe(0);
      await store.commitAsset(blob('b1'), newAsset('o1', 'b1', { job_id: 'j' }), { job_id: 'j', lease_token: claimed!.lease!.token });
      const now = await version();
      expect(now).toBeGreaterThan(0);
      expect((await store.getJob('acc1', 'j'))?.view_version).toBe(now);
      expect((await store.getJobById('j'))?.view_version).toBe(now);
      expect((await store.listJobsByStatus(['running'], 10)).find((j) => j.id === 'j')?.view_version).toBe(now);
      expect((await store.listAccountJobs('acc1', { statuses: ['running'], limit: 10 })).find((j) => j.id === 'j')?.view_version).toBe(now);
    });

    it("moves when one of the job's outputs is deleted, swept or blocked; a refused deletion leaves it", async () => {
      await store.createJob(newJob('j'));
      await store.commitAsset(blob('b1'), newAsset('o1', 'b1', { job_id: 'j' }));
      await store.commitAsset(blob('b2'), newAsset('o2', 'b2', { job_id: 'j', expires_at: T0 + 10 }));
      await store.commitAsset(blob('b3'), newAsset('o3', 'b3', { job_id: 'j' }));
      await store.commitAsset(blob('b4'), newAsset('o4', 'b4', { job_id: 'j' }));

      let last = await version();
      expect(await store.deleteAsset('acc2', 'o1', T0)).toBe(false);
      expect(await version()).toBe(last);
      expect(await store.deleteAsset('acc1', 'o1', T0)).toBe(true);
      expect(await version()).toBeGreaterThan(last);

      last = await version();
      expect(await store.deleteExpiredAssets(T0 + 10, 10)).toEqual(['b2']);
      expect(await version()).toBeGreaterThan(last);

      last = await version();
      expect(await store.blockBlob('b3', 'test', T0)).toEqual(['o3']);
      expect(await version()).toBeGreaterThan(last);
      expect((await store.listJobAssets('acc1', 'j')).map((a) => a.id)).toEqual(['o4']);
    });

    // Where the store has a commit mark (SQLite), a kept view trusts it in place of this read.
    it('a commit mark, where the store has one, stays put without a commit and moves with each of its writes', async () => {
      const mark = () => store.commitMark?.();
      if (store.commitMark === undefined) return;
      await store.createJob(newJob('j'));
      const m0 = mark();
      expect(m0).toEqual(expect.any(String));
      await store.getJobStamp('acc1', 'j');
      await store.getJob('acc1', 'j');
      expect(mark()).toBe(m0);
      await store.commitAsset(blob('b1'), newAsset('o1', 'b1', { job_id: 'j' }));
      const m1 = mark();
      expect(m1).not.toBe(m0);
      expect(await store.transitionJob('j', 'queued', 'canceled', { completed_at: T0 + 1 })).toMatchObject({ id: 'j', status: 'canceled' });
      expect([m0, m1]).not.toContain(mark());
    });
  });
}
