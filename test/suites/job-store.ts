// JobStore conformance: seqs, compare-and-set status changes, progress,
// the scheduler's queue reads and retention. The account listings
// (job-store-listing.ts), leases (job-store-leases.ts) and queue bounds
// (job-store-bounds.ts) run from here. Concurrency cases fire calls together
// through one store; every implementation must still let exactly one
// compare-and-set win.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewJob } from '../../storage/types.ts';
import { jobBoundCases } from './job-store-bounds.ts';
import { jobLeaseCases } from './job-store-leases.ts';
import { type JobStoreWithOutputs, jobListingCases } from './job-store-listing.ts';
import { type MakeStore, newJob, T0 } from './store-fixtures.ts';

const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];

const job = newJob;

export function jobStoreSuite(make: MakeStore<JobStoreWithOutputs>): void {
  describe('JobStore', () => {
    let store: JobStoreWithOutputs;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());
    const ids = (jobs: Array<{ id: string }>) => jobs.map((j) => j.id);
    /** Creates jobs in order; each later one gets a larger seq. */
    const createAll = async (...jobs: NewJob[]) => {
      const out = [];
      for (const j of jobs) out.push(await store.createJob(j));
      return out;
    };
    const statusOf = async (id: string) => (await store.getJobById(id))?.status;

    it('createJob fills the defaults and hands out increasing seqs', async () => {
      const [a, b, c] = await createAll(job('j1'), job('j2', { account_id: 'acc2' }), job('j3'));
      const { workflow, ...fields } = job('j1');
      expect(a).toEqual({
        ...fields,
        seq: expect.any(Number),
        started_at: null,
        completed_at: null,
        progress: null,
        error: null,
        attempts: 0,
        priority: 0,
        metadata: null,
        outputs_reused: false,
        history_hidden_at: null,
        cached_nodes: null,
        temp_asset_ids: [],
        lease: null,
        view_version: 0,
      });
      expect(b!.seq).toBeGreaterThan(a!.seq);
      expect(c!.seq).toBeGreaterThan(b!.seq);
      expect(await store.getJobById('j1')).toEqual(a);
      expect(await store.listJobWorkflows('acc1', ['j1'])).toEqual([{ id: 'j1', workflow }]);
    });

    it('concurrent creates get distinct seqs; a rejected duplicate id changes nothing', async () => {
      const made = await Promise.all(Array.from({ length: 10 }, (_, i) => store.createJob(job(`c${i}`))));
      expect(new Set(made.map((j) => j.seq)).size).toBe(10);
      await expect(store.createJob(job('c0', { account_id: 'acc2' }))).rejects.toThrow();
      expect((await store.getJobById('c0'))?.account_id).toBe('acc1');
      const next = await store.createJob(job('after'));
      expect(next.seq).toBeGreaterThan(Math.max(...made.map((j) => j.seq)));
    });

    it("getJob returns only the account's own job; getJobById any account's", async () => {
      const created = await store.createJob(job('j1'));
      expect(await store.getJob('acc1', 'j1')).toEqual(created);
      expect(await store.getJob('acc2', 'j1')).toBeNull();
      expect(await store.getJob('acc1', 'missing')).toBeNull();
      expect(await store.getJobById('j1')).toEqual(created);
      expect(await store.getJobById('missing')).toBeNull();
    });

    it("listJobWorkflows: the workflows of the account's jobs named, in the order asked, others left out", async () => {
      const wf = (n: number) => ({ '1': { class_type: 'Show', inputs: { value: n } } });
      await createAll(job('j1', { workflow: wf(1) }), job('j2', { workflow: wf(2) }), job('x1', { account_id: 'acc2', workflow: wf(3) }));
      expect(await store.listJobWorkflows('acc1', ['j2', 'missing', 'x1', 'j1'])).toEqual([
        { id: 'j2', workflow: wf(2) },
        { id: 'j1', workflow: wf(1) },
      ]);
      expect(await store.listJobWorkflows('acc2', ['x1', 'j1'])).toEqual([{ id: 'x1', workflow: wf(3) }]);
      expect(await store.listJobWorkflows('acc1', [])).toEqual([]);
      // More ids than one statement binds at once.
      const many = Array.from({ length: 250 }, (_, i) => job(`m${i}`, { workflow: wf(i) }));
      await createAll(...many);
      const read = await store.listJobWorkflows('acc1', many.map((j) => j.id).reverse());
      expect(read.map((w) => w.id)).toEqual(many.map((j) => j.id).reverse());
      expect(read[0]!.workflow).toEqual(wf(249));
    });

    it('no read but listJobWorkflows carries the workflow', async () => {
      await createAll(job('q1'), job('r1'), job('s1'));
      await store.transitionJob('r1', 'queued', 'running');
      await store.transitionJob('s1', 'queued', 'running');
      await store.transitionJob('s1', 'running', 'succeeded');
      const ALL = ['queued', 'running', 'succeeded'];
      const reads = [
        [await store.createJob(job('c1'))],
        [await store.getJob('acc1', 'q1')],
        [await store.getJobById('r1')],
        await store.listJobsByStatus(ALL, 10),
        await store.listQueuedJobs('acc1', 10),
        await store.listAccountJobs('acc1', { statuses: ALL, limit: 10 }),
        await store.listAccountJobs('acc1', { statuses: ALL, sort: 'execution_time', limit: 10 }),
      ];
      for (const rows of reads) {
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) expect(row).not.toHaveProperty('workflow');
      }
    });

    it('JSON columns round-trip and stored records do not alias caller objects', async () => {
      const workflow = {
        '3': { class_type: 'KSampler', inputs: { seed: 2 ** 40, cfg: 7.5, denoise: 1, model: ['4', 0], tag: 'ünïcødé ✓', extra: null, on: true } },
      };
      const progress = { node: '3', value: 5, max: 20, nested: { list: [1, 'two', null] } };
      const error = { type: 'execution_error', message: 'boom', details: { node_id: '3', traceback: ['a', 'b'] } };
      await store.createJob(job('j1', { workflow }));
      const [first] = await store.listJobWorkflows('acc1', ['j1']);
      expect(first!.workflow).toEqual(workflow);
      (first!.workflow['3'] as Record<string, unknown>).class_type = 'mutated';
      workflow['3'].class_type = 'mutated too';
      await store.transitionJob('j1', 'queued', 'running', { started_at: T0 + 1 });
      await store.saveProgress('j1', progress);
      progress.value = 99;
      await store.transitionJob('j1', 'running', 'failed', { completed_at: T0 + 2, error });
      const read = await store.getJobById('j1');
      const [again] = await store.listJobWorkflows('acc1', ['j1']);
      expect((again!.workflow['3'] as Record<string, unknown>).class_type).toBe('KSampler');
      expect(again!.workflow).toEqual({ '3': { ...workflow['3'], class_type: 'KSampler' } });
      expect(read!.progress).toEqual({ ...progress, value: 5 });
      expect(read!.error).toEqual(error);
      read!.error!.message = 'changed by reader';
      expect((await store.getJobById('j1'))!.error).toEqual(error);
    });

    it('priority and metadata are kept as given, by every read, without aliasing the caller', async () => {
      const metadata = { run: 'batch-7', tags: ['a', 'ü'], nested: { n: 2 ** 40, ok: true, none: null } };
      const created = await store.createJob(job('j1', { priority: -42, metadata }));
      expect(created).toMatchObject({ priority: -42, metadata, outputs_reused: false });
      metadata.run = 'changed by the caller';
      created.metadata!.run = 'changed by a reader';
      const expected = { priority: -42, metadata: { ...metadata, run: 'batch-7' } };
      expect(await store.getJob('acc1', 'j1')).toMatchObject(expected);
      expect(await store.getJobById('j1')).toMatchObject(expected);
      expect((await store.listQueuedJobs('acc1', 1))[0]).toMatchObject(expected);
      expect((await store.listJobsByStatus(['queued'], 1))[0]).toMatchObject(expected);
      expect((await store.listAccountJobs('acc1', { statuses: ['queued'], limit: 1 }))[0]).toMatchObject(expected);
      await store.transitionJob('j1', 'queued', 'running', { started_at: T0 + 1 });
      expect(await store.getJobById('j1')).toMatchObject(expected);
    });

    it('outputs_reused: false until a patch or a progress save says otherwise, while the job runs', async () => {
      await createAll(job('j1'), job('j2'), job('j3'));
      await store.saveProgress('j1', { step: 0 }, true); // still queued: nothing written
      expect((await store.getJobById('j1'))!.outputs_reused).toBe(false);
      await store.transitionJob('j1', 'queued', 'running');
      await store.saveProgress('j1', { step: 1 });
      expect((await store.getJobById('j1'))!.outputs_reused).toBe(false);
      await store.saveProgress('j1', { step: 2 }, true);
      expect(await store.getJobById('j1')).toMatchObject({ progress: { step: 2 }, outputs_reused: true });
      await store.saveProgress('j1', { step: 3 }); // left out: kept
      expect((await store.getJobById('j1'))!.outputs_reused).toBe(true);
      await store.transitionJob('j1', 'running', 'queued', { outputs_reused: false, progress: null }); // re-queued after a restart
      expect((await store.getJobById('j1'))!.outputs_reused).toBe(false);
      await store.transitionJob('j2', 'queued', 'running');
      await store.transitionJob('j2', 'running', 'succeeded', { completed_at: T0, outputs_reused: true });
      expect((await store.getJobById('j2'))!.outputs_reused).toBe(true);
      await store.saveProgress('j2', { step: 9 }, false); // finished: nothing written
      expect(await store.getJobById('j2')).toMatchObject({ progress: null, outputs_reused: true });
      expect((await store.getJobById('j3'))!.outputs_reused).toBe(false);
    });

    it("a run's record (cached nodes, temporary files): none until the end writes it, then read back by every read, unaliased", async () => {
      await createAll(job('j1'), job('j2'), job('j3'));
      const none = { cached_nodes: null, temp_asset_ids: [] };
      await store.transitionJob('j1', 'queued', 'running', { started_at: T0 + 1 });
      await store.saveProgress('j1', { step: 1 }, true);
      expect(await store.getJobById('j1')).toMatchObject(none);
      const cached = ['4', '10', 'ü'];
      const temps = ['a1', 'a2'];
      await store.transitionJob('j1', 'running', 'succeeded', { completed_at: T0 + 2, cached_nodes: cached, temp_asset_ids: temps });
      cached.push('changed by the caller');
      temps.length = 0;
      const written = { cached_nodes: ['4', '10', 'ü'], temp_asset_ids: ['a1', 'a2'] };
      const read = await store.getJobById('j1');
      expect(read).toMatchObject(written);
      read!.cached_nodes!.push('changed by a reader');
      expect(await store.getJob('acc1', 'j1')).toMatchObject(written);
      expect((await store.listJobsByStatus(['succeeded'], 10))[0]).toMatchObject(written);
      expect((await store.listAccountJobs('acc1', { statuses: ['succeeded'], limit: 10 }))[0]).toMatchObject(written);
      // An engine that served nothing from cache says so with an empty list, unlike one that never said (null).
      await store.transitionJob('j2', 'queued', 'running');
      await store.transitionJob('j2', 'running', 'failed', { completed_at: T0, cached_nodes: [], temp_asset_ids: [] });
      expect(await store.getJobById('j2')).toMatchObject({ status: 'failed', cached_nodes: [], temp_asset_ids: [] });
      // A patch without them leaves them as they are; an explicit null clears.
      await store.transitionJob('j1', 'succeeded', 'expired', { completed_at: T0 + 3 });
      expect(await store.getJobById('j1')).toMatchObject(written);
      expect(await store.getJobById('j3')).toMatchObject(none);
      await store.transitionJob('j3', 'queued', 'running', { cached_nodes: ['1'], temp_asset_ids: ['t'] });
      await store.transitionJob('j3', 'running', 'queued', { cached_nodes: null, temp_asset_ids: [] });
      expect(await store.getJobById('j3')).toMatchObject(none);
    });

    it('transitionJob moves only from the expected status and applies the patch', async () => {
      await store.createJob(job('j1'));
      expect(await store.transitionJob('j1', 'running', 'succeeded', { completed_at: T0 })).toBeNull();
      expect(await store.getJobById('j1')).toMatchObject({ status: 'queued', completed_at: null });
      expect(await store.transitionJob('j1', 'queued', 'running', { started_at: T0 + 1, progress: { p: 1 } })).toMatchObject({
        id: 'j1',
        status: 'running',
      });
      expect(await store.getJobById('j1')).toMatchObject({
        status: 'running',
        started_at: T0 + 1,
        progress: { p: 1 },
        completed_at: null,
        error: null,
      });
      // Absent keys stay as they are; an explicit null clears.
      expect(await store.transitionJob('j1', 'running', 'succeeded', { completed_at: T0 + 2, progress: null })).toMatchObject({
        id: 'j1',
        status: 'succeeded',
      });
      expect(await store.getJobById('j1')).toMatchObject({ status: 'succeeded', started_at: T0 + 1, completed_at: T0 + 2, progress: null });
      expect(await store.transitionJob('j1', 'running', 'failed')).toBeNull();
      expect(await store.transitionJob('missing', 'queued', 'running')).toBeNull();
    });

    it('transitionJob resolves to the job as the move left it: what a read gives right after', async () => {
      await store.createJob(job('j1', { metadata: { tag: 'x' }, priority: 2 }));
      await store.createJob(job('j2'));
      // Out of the queue (a move that also counts the queue), then out of running with a patch of every kind.
      const started = await store.transitionJob('j1', 'queued', 'running', { started_at: T0 + 1, add_attempts: 1 });
      expect(started).toMatchObject({ id: 'j1', status: 'running', started_at: T0 + 1, attempts: 1, metadata: { tag: 'x' }, priority: 2 });
      expect(started).toEqual(await store.getJobById('j1'));
      const patch = {
        completed_at: T0 + 2,
        progress: { value: 1, max: 1 },
        error: { message: 'boom', code: 'execution_error' },
        outputs_reused: true,
        cached_nodes: ['3'],
        temp_asset_ids: ['t1'],
        lease: null,
      };
      const ended = await store.transitionJob('j1', 'running', 'failed', patch);
      expect(ended).toMatchObject({
        id: 'j1',
        status: 'failed',
        completed_at: T0 + 2,
        error: patch.error,
        outputs_reused: true,
        cached_nodes: ['3'],
        lease: null,
      });
      expect(ended).toEqual(await store.getJobById('j1'));
      const canceled = await store.transitionJob('j2', 'queued', 'canceled', { completed_at: T0 + 3 });
      expect(canceled).toEqual(await store.getJobById('j2'));
      expect(canceled).toMatchObject({ status: 'canceled', completed_at: T0 + 3 });
    });

    it('of concurrent transitions from the same status exactly one wins', async () => {
      await store.createJob(job('j1'));
      const starts = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.transitionJob('j1', 'queued', 'running', { started_at: T0 + i, add_attempts: 1 })),
      );
      expect(starts.filter(Boolean)).toHaveLength(1);
      const winner = starts.findIndex(Boolean);
      expect(await store.getJobById('j1')).toMatchObject({ status: 'running', started_at: T0 + winner, attempts: 1 });
      const ends = await Promise.all([
        store.transitionJob('j1', 'running', 'succeeded', { completed_at: T0 + 10 }),
        store.transitionJob('j1', 'running', 'canceling'),
        store.transitionJob('j1', 'running', 'failed', { error: { message: 'x' } }),
      ]);
      expect(ends.filter(Boolean)).toHaveLength(1);
      const after = await store.getJobById('j1');
      expect(after!.status).toBe(['succeeded', 'canceling', 'failed'][ends.findIndex(Boolean)]);
      expect(after!.error).toEqual(ends[2] ? { message: 'x' } : null); // a loser's patch left no trace
    });

    it('add_attempts adds to attempts, also across a restart', async () => {
      await store.createJob(job('j1'));
      await store.transitionJob('j1', 'queued', 'running', { add_attempts: 1 });
      expect((await store.getJobById('j1'))!.attempts).toBe(1);
      await store.transitionJob('j1', 'running', 'running', { add_attempts: 2 }); // a restart re-running it
      expect((await store.getJobById('j1'))!.attempts).toBe(3);
      await store.transitionJob('j1', 'running', 'succeeded');
      expect((await store.getJobById('j1'))!.attempts).toBe(3);
      expect(await store.transitionJob('j1', 'running', 'failed', { add_attempts: 5 })).toBeNull();
      expect((await store.getJobById('j1'))!.attempts).toBe(3);
    });

    it('saveProgress writes only while running or canceling', async () => {
      await store.createJob(job('j1'));
      await store.saveProgress('j1', { step: 0 });
      expect((await store.getJobById('j1'))!.progress).toBeNull(); // still queued
      await store.transitionJob('j1', 'queued', 'running');
      await store.saveProgress('j1', { step: 1 });
      expect((await store.getJobById('j1'))!.progress).toEqual({ step: 1 });
      await store.transitionJob('j1', 'running', 'canceling');
      await store.saveProgress('j1', { step: 2 });
      expect((await store.getJobById('j1'))!.progress).toEqual({ step: 2 });
      await store.transitionJob('j1', 'canceling', 'canceled');
      await store.saveProgress('j1', { step: 3 }); // a late event must not overwrite the final snapshot
      expect((await store.getJobById('j1'))!.progress).toEqual({ step: 2 });
      await store.saveProgress('missing', { step: 1 }); // no job: no error
    });

    it('listJobsByStatus: the given statuses, oldest seq first, up to the limit', async () => {
      await createAll(job('q1'), job('r1', { account_id: 'acc2' }), job('q2'), job('s1'), job('r2'));
      await store.transitionJob('r1', 'queued', 'running');
      await store.transitionJob('r2', 'queued', 'running');
      await store.transitionJob('s1', 'queued', 'running');
      await store.transitionJob('s1', 'running', 'succeeded');
      expect(ids(await store.listJobsByStatus(['running'], 10))).toEqual(['r1', 'r2']);
      expect(ids(await store.listJobsByStatus(['queued', 'running'], 10))).toEqual(['q1', 'r1', 'q2', 'r2']);
      expect(ids(await store.listJobsByStatus(['running', 'queued'], 3))).toEqual(['q1', 'r1', 'q2']);
      expect(await store.listJobsByStatus(['failed'], 10)).toEqual([]);
      expect(await store.listJobsByStatus([], 10)).toEqual([]);
    });

    it("listQueuedJobs: one account's queued jobs in submission order", async () => {
      await createAll(job('a1'), job('b1', { account_id: 'acc2' }), job('a2'), job('a3'), job('a4'));
      await store.transitionJob('a2', 'queued', 'running');
      expect(ids(await store.listQueuedJobs('acc1', 10))).toEqual(['a1', 'a3', 'a4']);
      expect(ids(await store.listQueuedJobs('acc1', 2))).toEqual(['a1', 'a3']);
      expect(ids(await store.listQueuedJobs('acc2', 10))).toEqual(['b1']);
      expect(await store.listQueuedJobs('nobody', 10)).toEqual([]);
    });

    it('listQueuedJobs: higher priority first, submission order within a priority', async () => {
      await createAll(
        job('low', { priority: -5 }),
        job('p0-first'),
        job('high', { priority: 10 }),
        job('other', { account_id: 'acc2', priority: 100 }),
        job('p0-second', { priority: 0 }),
        job('high-later', { priority: 10 }),
        job('mid', { priority: 3 }),
      );
      expect(ids(await store.listQueuedJobs('acc1', 10))).toEqual(['high', 'high-later', 'mid', 'p0-first', 'p0-second', 'low']);
      expect(ids(await store.listQueuedJobs('acc1', 2))).toEqual(['high', 'high-later']);
      await store.transitionJob('high', 'queued', 'running');
      expect(ids(await store.listQueuedJobs('acc1', 2))).toEqual(['high-later', 'mid']);
    });

    it('listAccountsWithQueuedJobs: each account once, with its oldest queued seq and its queued count, oldest first', async () => {
      const [a1, b1, , c1, b2] = await createAll(
        job('a1'),
        job('b1', { account_id: 'acc2' }),
        job('a2'),
        job('c1', { account_id: 'acc3' }),
        job('b2', { account_id: 'acc2' }),
        job('d1', { account_id: 'acc4' }),
      );
      await store.transitionJob('a1', 'queued', 'running'); // acc1's oldest queued is now a2
      await store.transitionJob('d1', 'queued', 'canceled'); // acc4 has none left
      const a2 = (await store.getJobById('a2'))!;
      // No job was claimed (claimJob): every account's last claim is 0.
      expect(await store.listAccountsWithQueuedJobs(10)).toEqual([
        { account_id: 'acc2', oldest_seq: b1!.seq, last_claimed_at: 0, queued: 2 },
        { account_id: 'acc1', oldest_seq: a2.seq, last_claimed_at: 0, queued: 1 },
        { account_id: 'acc3', oldest_seq: c1!.seq, last_claimed_at: 0, queued: 1 },
      ]);
      expect(a2.seq).toBeGreaterThan(a1!.seq);
      expect(b2!.seq).toBeGreaterThan(b1!.seq);
      expect(await store.listAccountsWithQueuedJobs(2)).toHaveLength(2);
    });

    it('peekQueuedAccounts: accounts with queued jobs and how many, up to the limit', async () => {
      if (!store.peekQueuedAccounts) return;
      expect(await store.peekQueuedAccounts(2)).toEqual([]);
      await createAll(job('a1'), job('a2'), job('b1', { account_id: 'acc2' }), job('c1', { account_id: 'acc3' }));
      await store.transitionJob('c1', 'queued', 'canceled'); // acc3 has none left
      const byAccount = (rows: Array<{ account_id: string; queued: number }>) => rows.sort((x, y) => x.account_id.localeCompare(y.account_id));
      expect(byAccount(await store.peekQueuedAccounts(10))).toEqual([
        { account_id: 'acc1', queued: 2 },
        { account_id: 'acc2', queued: 1 },
      ]);
      expect(await store.peekQueuedAccounts(1)).toHaveLength(1);
      await store.transitionJob('b1', 'queued', 'running');
      expect(await store.peekQueuedAccounts(2)).toEqual([{ account_id: 'acc1', queued: 2 }]);
    });

    it('countJobs over statuses, for all accounts or one', async () => {
      await createAll(job('a1'), job('a2'), job('b1', { account_id: 'acc2' }), job('b2', { account_id: 'acc2' }));
      await store.transitionJob('a1', 'queued', 'running');
      await store.transitionJob('b1', 'queued', 'running');
      expect(await store.countJobs(['queued'])).toBe(2);
      expect(await store.countJobs(['queued', 'running'])).toBe(4);
      expect(await store.countJobs(['running'], 'acc1')).toBe(1);
      expect(await store.countJobs(['queued', 'running'], 'acc2')).toBe(2);
      expect(await store.countJobs(['queued'], 'nobody')).toBe(0);
      expect(await store.countJobs([])).toBe(0);
    });

    it('countQueuedBefore: queued jobs of any account submitted earlier', async () => {
      const [j1, j2, j3, j4] = await createAll(job('j1'), job('j2', { account_id: 'acc2' }), job('j3'), job('j4'));
      expect(await store.countQueuedBefore(j1!)).toBe(0);
      expect(await store.countQueuedBefore(j4!)).toBe(3);
      await store.transitionJob('j2', 'queued', 'running');
      expect(await store.countQueuedBefore(j3!)).toBe(1);
      expect(await store.countQueuedBefore(j4!)).toBe(2);
      expect(j2!.seq).toBeLessThan(j3!.seq);
    });

    it("countQueuedBefore: within the job's account, the jobs before it in pick order", async () => {
      const [a1, b1, high, a2, b2, low] = await createAll(
        job('a1'),
        job('b1', { account_id: 'acc2', priority: 50 }),
        job('high', { priority: 5 }),
        job('a2'),
        job('b2', { account_id: 'acc2' }),
        job('low', { priority: -1 }),
      );
      // Another account's jobs count by submission order whatever their priority (accounts take turns).
      expect(await store.countQueuedBefore(high!)).toBe(1); // b1
      expect(await store.countQueuedBefore(a1!)).toBe(1); // high
      expect(await store.countQueuedBefore(a2!)).toBe(3); // a1, high, b1
      expect(await store.countQueuedBefore(low!)).toBe(5); // a1, high, a2, b1, b2
      expect(await store.countQueuedBefore(b1!)).toBe(1); // a1
      expect(await store.countQueuedBefore(b2!)).toBe(4); // a1, high, a2, b1
    });

    describe('expireJobs', () => {
      /** A job already in `status`, through legal moves. */
      const jobIn = async (id: string, status: string, expiresAt: number) => {
        await store.createJob(job(id, { expires_at: expiresAt }));
        const path: Record<string, string[]> = {
          queued: [],
          running: ['running'],
          succeeded: ['running', 'succeeded'],
          failed: ['running', 'failed'],
          canceled: ['canceled'],
        };
        let from = 'queued';
        for (const to of path[status]!) {
          await store.transitionJob(id, from, to);
          from = to;
        }
      };

      it('moves only past-deadline jobs in the given statuses, once', async () => {
        await jobIn('done', 'succeeded', T0 + 10);
        await jobIn('failed', 'failed', T0 + 20);
        await jobIn('canceled', 'canceled', T0 + 100); // at the deadline: expires, as assets do
        await jobIn('fresh', 'succeeded', T0 + 101);
        await jobIn('queued', 'queued', T0);
        await jobIn('running', 'running', T0);
        const expired = await store.expireJobs(TERMINAL, T0 + 100, 10);
        expect(expired.sort()).toEqual(['canceled', 'done', 'failed']);
        for (const id of expired) expect(await statusOf(id)).toBe('expired');
        expect(await statusOf('fresh')).toBe('succeeded');
        expect(await statusOf('queued')).toBe('queued');
        expect(await statusOf('running')).toBe('running');
        expect(await store.expireJobs(TERMINAL, T0 + 100, 10)).toEqual([]);
      });

      it('honours the status list and the limit', async () => {
        await jobIn('s1', 'succeeded', T0);
        await jobIn('s2', 'succeeded', T0 + 1);
        await jobIn('f1', 'failed', T0);
        expect(await store.expireJobs(['failed'], T0 + 10, 10)).toEqual(['f1']);
        const first = await store.expireJobs(TERMINAL, T0 + 10, 1);
        expect(first).toHaveLength(1);
        const rest = await store.expireJobs(TERMINAL, T0 + 10, 10);
        expect([...first, ...rest].sort()).toEqual(['s1', 's2']);
        expect(await store.expireJobs([], T0 + 10, 10)).toEqual([]);
      });

      it('concurrent sweeps never report the same job twice', async () => {
        for (let i = 0; i < 12; i++) await jobIn(`j${i}`, i % 2 ? 'succeeded' : 'failed', T0 + i);
        const sweeps = await Promise.all(Array.from({ length: 4 }, () => store.expireJobs(TERMINAL, T0 + 100, 5)));
        const reported = sweeps.flat();
        expect(new Set(reported).size).toBe(reported.length);
        const more = await store.expireJobs(TERMINAL, T0 + 100, 100);
        expect([...reported, ...more].sort()).toEqual(Array.from({ length: 12 }, (_, i) => `j${i}`).sort());
        expect(await store.countJobs(['expired'])).toBe(12);
      });
    });

    jobListingCases(() => store);
    jobLeaseCases(() => store);
    jobBoundCases(() => store);
  });
}
