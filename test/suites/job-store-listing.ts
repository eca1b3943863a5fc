// JobStore conformance, the account listings (run from job-store.ts): one
// account's jobs by status, retention and output kind, newest first or by
// execution time, a page at a time, and their count.
import { beforeEach, describe, expect, it } from 'vitest';
import type { AssetStore, JobStore, NewJob } from '../../storage/types.ts';
import { newAsset, T0 } from './store-fixtures.ts';

/**
 * The job store under test, with the commitAsset of the asset store it shares
 * a database with: listings filter jobs by their output assets' kind.
 */
export type JobStoreWithOutputs = JobStore & Pick<AssetStore, 'commitAsset'>;

const DAY = 86_400_000;
const ALL = ['queued', 'running', 'succeeded', 'failed', 'canceling', 'canceled', 'expired'];

const job = (id: string, over: Partial<NewJob> = {}): NewJob => ({
  id,
  account_id: 'acc1',
  status: 'queued',
  workflow: { '1': { class_type: 'Show', inputs: { value: 1 } } },
  created_at: T0,
  expires_at: T0 + DAY,
  ...over,
});

export function jobListingCases(getStore: () => JobStoreWithOutputs): void {
  describe('account job listings', () => {
    let store: JobStoreWithOutputs;
    beforeEach(() => {
      store = getStore();
    });
    const ids = (jobs: Array<{ id: string }>) => jobs.map((j) => j.id);

    /** Creates a job and moves it to `status`, running from `started` to `completed` when those are given. */
    async function make(id: string, status: string, over: Partial<NewJob> = {}, started?: number, completed?: number) {
      await store.createJob(job(id, over));
      const path: Record<string, string[]> = {
        queued: [],
        running: ['running'],
        canceling: ['running', 'canceling'],
        succeeded: ['running', 'succeeded'],
        failed: ['running', 'failed'],
        canceled: ['canceled'],
      };
      let from = 'queued';
      for (const to of path[status]!) {
        const patch = to === 'running' ? { started_at: started ?? T0 + 1 } : to === 'canceling' ? {} : { completed_at: completed ?? T0 + 2 };
        expect(await store.transitionJob(id, from, to, patch)).toMatchObject({ id: id, status: to });
        from = to;
      }
    }

    it("the account's jobs in the given statuses, newest first by default, a page at a time", async () => {
      await make('q1', 'queued');
      await make('s1', 'succeeded');
      await make('x1', 'succeeded', { account_id: 'acc2' });
      await make('f1', 'failed');
      await make('r1', 'running');
      await make('c1', 'canceled');
      expect(ids(await store.listAccountJobs('acc1', { statuses: ALL, limit: 10 }))).toEqual(['c1', 'r1', 'f1', 's1', 'q1']);
      expect(ids(await store.listAccountJobs('acc1', { statuses: ['succeeded', 'failed', 'canceled'], limit: 10 }))).toEqual(['c1', 'f1', 's1']);
      expect(ids(await store.listAccountJobs('acc1', { statuses: ALL, limit: 2, offset: 1 }))).toEqual(['r1', 'f1']);
      expect(ids(await store.listAccountJobs('acc1', { statuses: ALL, limit: 2, offset: 4 }))).toEqual(['q1']);
      expect(await store.listAccountJobs('acc1', { statuses: ALL, limit: 2, offset: 5 })).toEqual([]);
      expect(ids(await store.listAccountJobs('acc1', { statuses: ALL, order: 'asc', limit: 3 }))).toEqual(['q1', 's1', 'f1']);
      expect(ids(await store.listAccountJobs('acc2', { statuses: ALL, limit: 10 }))).toEqual(['x1']);
      expect(await store.listAccountJobs('acc1', { statuses: [], limit: 10 })).toEqual([]);
      expect(await store.listAccountJobs('nobody', { statuses: ALL, limit: 10 })).toEqual([]);
      // The rows getJob returns (no workflow: listJobWorkflows reads that).
      const [c1] = await store.listAccountJobs('acc1', { statuses: ['canceled'], limit: 1 });
      expect(c1).toEqual(await store.getJob('acc1', 'c1'));
    });

    it('before_seq pages a newest-first listing by seq: no job skipped or repeated when others arrive between pages', async () => {
      for (const id of ['j1', 'j2', 'j3', 'j4', 'j5']) await make(id, id === 'j3' ? 'succeeded' : 'queued');
      await make('x1', 'queued', { account_id: 'acc2' });
      const first = await store.listAccountJobs('acc1', { statuses: ALL, limit: 2 });
      expect(ids(first)).toEqual(['j5', 'j4']);
      await make('j6', 'queued'); // newer than the first page: not on the later ones
      const second = await store.listAccountJobs('acc1', { statuses: ALL, limit: 2, before_seq: first.at(-1)!.seq });
      expect(ids(second)).toEqual(['j3', 'j2']);
      const third = await store.listAccountJobs('acc1', { statuses: ALL, limit: 2, before_seq: second.at(-1)!.seq });
      expect(ids(third)).toEqual(['j1']);
      expect(await store.listAccountJobs('acc1', { statuses: ALL, limit: 2, before_seq: third[0]!.seq })).toEqual([]);
      // With a status filter: the seq bounds the page, the filter its jobs.
      expect(ids(await store.listAccountJobs('acc1', { statuses: ['queued'], limit: 10, before_seq: first[0]!.seq }))).toEqual(['j4', 'j2', 'j1']);
    });

    it('countAccountJobs counts what the listing filters, ignoring pages', async () => {
      await make('q1', 'queued');
      await make('s1', 'succeeded');
      await make('s2', 'succeeded');
      await make('x1', 'succeeded', { account_id: 'acc2' });
      expect(await store.countAccountJobs('acc1', { statuses: ALL })).toBe(3);
      expect(await store.countAccountJobs('acc1', { statuses: ['succeeded'] })).toBe(2);
      expect(await store.countAccountJobs('acc2', { statuses: ['succeeded', 'queued'] })).toBe(1);
      expect(await store.countAccountJobs('acc1', { statuses: [] })).toBe(0);
    });

    it('expires_after leaves out jobs whose retention is over', async () => {
      await make('old', 'succeeded', { expires_at: T0 + 10 });
      await make('edge', 'failed', { expires_at: T0 + 20 });
      await make('new', 'succeeded', { expires_at: T0 + 30 });
      const filter = { statuses: ALL, expires_after: T0 + 20 };
      expect(ids(await store.listAccountJobs('acc1', { ...filter, limit: 10 }))).toEqual(['new']);
      expect(await store.countAccountJobs('acc1', filter)).toBe(1);
    });

    it('hideFromHistory takes the named jobs or all of them, in the given statuses, out of the history listing; nothing else changes', async () => {
      const FINISHED = ['succeeded', 'failed', 'canceled'];
      await make('s1', 'succeeded');
      await make('f1', 'failed');
      await make('c1', 'canceled');
      await make('r1', 'running');
      await make('x1', 'succeeded', { account_id: 'acc2' });
      const history = async (accountId = 'acc1') => ids(await store.listAccountJobs(accountId, { statuses: ALL, in_history: true, limit: 10 }));
      expect(await history()).toEqual(['r1', 'c1', 'f1', 's1']);
      // Another account's job, a running one and an unknown id are left alone.
      expect(await store.hideFromHistory('acc1', FINISHED, ['s1', 'x1', 'r1', 'nope'], T0 + 5)).toBe(1);
      expect(await history()).toEqual(['r1', 'c1', 'f1']);
      expect(await store.countAccountJobs('acc1', { statuses: ALL, in_history: true })).toBe(3);
      expect((await store.getJob('acc1', 's1'))?.history_hidden_at).toBe(T0 + 5);
      expect((await store.getJob('acc1', 'f1'))?.history_hidden_at).toBeNull();
      // Hidden is not gone: every other read still has the job.
      expect(ids(await store.listAccountJobs('acc1', { statuses: ALL, limit: 10 }))).toEqual(['r1', 'c1', 'f1', 's1']);
      // 'all' hides the rest in those statuses, once; a job hidden before keeps its time.
      expect(await store.hideFromHistory('acc1', FINISHED, 'all', T0 + 9)).toBe(2);
      expect(await store.hideFromHistory('acc1', FINISHED, 'all', T0 + 10)).toBe(0);
      expect(await history()).toEqual(['r1']);
      expect((await store.getJob('acc1', 's1'))?.history_hidden_at).toBe(T0 + 5);
      expect(await history('acc2')).toEqual(['x1']);
      expect(await store.hideFromHistory('acc1', [], 'all', T0 + 11)).toBe(0);
    });

    it('output_type keeps jobs with an output asset of that kind, of that account', async () => {
      await make('img', 'succeeded');
      await make('vid', 'succeeded');
      await make('none', 'succeeded');
      await make('foreign', 'succeeded', { account_id: 'acc2' });
      const commit = (id: string, jobId: string, outputType: string, accountId = 'acc1') =>
        store.commitAsset(
          { key: `blob-${id}`, hash: `blake3:${id}`, size: 3 },
          newAsset(id, `blob-${id}`, { job_id: jobId, output_type: outputType, account_id: accountId }),
        );
      await commit('a1', 'img', 'image');
      await commit('a2', 'img', 'image');
      await commit('a3', 'vid', 'video');
      await commit('a4', 'foreign', 'image', 'acc2');
      const images = { statuses: ALL, output_type: 'image' };
      expect(ids(await store.listAccountJobs('acc1', { ...images, limit: 10 }))).toEqual(['img']);
      expect(await store.countAccountJobs('acc1', images)).toBe(1);
      expect(ids(await store.listAccountJobs('acc1', { statuses: ALL, output_type: 'video', limit: 10 }))).toEqual(['vid']);
      expect(await store.countAccountJobs('acc1', { statuses: ALL, output_type: 'audio' })).toBe(0);
      expect(ids(await store.listAccountJobs('acc2', { ...images, limit: 10 }))).toEqual(['foreign']);
    });

    it('sort by execution time: longest first (desc) or shortest first (asc), jobs without one last', async () => {
      await make('fast', 'succeeded', {}, T0 + 100, T0 + 110); // 10
      await make('slow', 'failed', {}, T0 + 100, T0 + 400); // 300
      await make('queued', 'queued');
      await make('mid', 'succeeded', {}, T0 + 100, T0 + 150); // 50
      await make('also-mid', 'succeeded', {}, T0 + 200, T0 + 250); // 50, newer
      await make('running', 'running');
      const q = { statuses: ALL, sort: 'execution_time' as const, limit: 10 };
      expect(ids(await store.listAccountJobs('acc1', q))).toEqual(['slow', 'also-mid', 'mid', 'fast', 'running', 'queued']);
      expect(ids(await store.listAccountJobs('acc1', { ...q, order: 'asc' }))).toEqual(['fast', 'mid', 'also-mid', 'slow', 'queued', 'running']);
      expect(ids(await store.listAccountJobs('acc1', { ...q, limit: 2, offset: 3 }))).toEqual(['fast', 'running']);
    });
  });
}
