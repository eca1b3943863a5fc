// JobStore conformance, leases: claims that keep an account's limit and pick
// order across runners, renewals, fenced writes, releases and the expired
// leases a live runner takes back. Run from job-store.ts.
import { expect, it } from 'vitest';
import { type JobClaim, LeaseLostError, type NewJob } from '../../storage/types.ts';
import type { JobStoreWithOutputs } from './job-store-listing.ts';
import { newAsset, newJob, T0 } from './store-fixtures.ts';

const LEASE = 30_000;

const job = newJob;

const claim = (over: Partial<JobClaim> = {}): JobClaim => ({ account_id: 'acc1', limit: 1, owner: 'runner-a', now: T0, lease_ms: LEASE, ...over });

export function jobLeaseCases(getStore: () => JobStoreWithOutputs): void {
  const create = async (...jobs: NewJob[]) => {
    for (const j of jobs) await getStore().createJob(j);
  };

  it("claimJob starts the account's next job in pick order under a lease; null at the limit or with nothing queued", async () => {
    const store = getStore();
    await create(job('a'), job('b', { priority: 5 }), job('c'), job('other', { account_id: 'acc2' }));
    const first = await store.claimJob(claim({ limit: 2 }));
    expect(first).toMatchObject({ id: 'b', status: 'running', started_at: T0, attempts: 1, lease: { owner: 'runner-a', expires_at: T0 + LEASE } });
    const second = await store.claimJob(claim({ limit: 2, owner: 'runner-b', now: T0 + 1 }));
    expect(second).toMatchObject({ id: 'a', lease: { owner: 'runner-b', expires_at: T0 + 1 + LEASE } });
    expect(await store.claimJob(claim({ limit: 2 }))).toBeNull();
    expect(await store.claimJob(claim({ limit: 0, account_id: 'acc2' }))).toBeNull();
    expect((await store.getJobById('b'))?.lease).toEqual(first?.lease);
    expect(await store.getJobById('c')).toMatchObject({ status: 'queued', lease: null });
    // A canceling job still holds its slot.
    await store.transitionJob('b', 'running', 'canceling');
    await store.transitionJob('a', 'running', 'succeeded', { lease: null });
    expect(await store.claimJob(claim({ limit: 1 }))).toBeNull();
    expect((await store.claimJob(claim({ limit: 2 })))?.id).toBe('c');
    expect(await store.claimJob(claim({ limit: 9 }))).toBeNull();
  });

  it('claimJob with `alone` claims only while no other account has queued jobs; its own queued and anyone running do not count', async () => {
    const store = getStore();
    await create(job('mine-1'), job('mine-2'), job('theirs', { account_id: 'acc2' }));
    expect(await store.claimJob(claim({ alone: true, limit: 5 }))).toBeNull();
    expect(await store.getJobById('mine-1')).toMatchObject({ status: 'queued', lease: null, attempts: 0 });
    // acc2's job leaves the queue (it runs): acc1's line is the only one.
    expect((await store.claimJob(claim({ account_id: 'acc2' })))?.id).toBe('theirs');
    expect((await store.claimJob(claim({ alone: true, limit: 5 })))?.id).toBe('mine-1');
    // The tier limit still holds.
    expect(await store.claimJob(claim({ alone: true, limit: 1 }))).toBeNull();
    // A job of acc2 queued again (taken back, say) closes the way once more.
    await create(job('theirs-2', { account_id: 'acc2' }));
    expect(await store.claimJob(claim({ alone: true, limit: 5 }))).toBeNull();
    expect((await store.claimJob(claim({ limit: 5 })))?.id).toBe('mine-2');
  });

  it('claimJob hands the job over with its workflow, as listJobWorkflows reads it, and its row as getJob does', async () => {
    const store = getStore();
    const workflow = { '1': { class_type: 'KSampler', inputs: { seed: 18446744073709551615n, steps: 20, text: 'a "quoted" cat' } } };
    await create(job('w', { workflow }));
    const claimed = await store.claimJob(claim());
    const { workflow: given, ...row } = claimed!;
    expect(given).toEqual(workflow);
    expect(given).toEqual((await store.listJobWorkflows('acc1', ['w']))[0].workflow);
    expect(row).toEqual(await store.getJob('acc1', 'w'));
  });

  it('concurrent claims of one account never exceed its limit, and each job is claimed once', async () => {
    const store = getStore();
    await create(...Array.from({ length: 6 }, (_, i) => job(`j${i}`)));
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => store.claimJob(claim({ limit: 2, owner: `r${i}` }))));
    const won = claims.filter((c) => c !== null);
    expect(won.map((c) => c!.id).sort()).toEqual(['j0', 'j1']);
    expect(await store.countJobs(['running'], 'acc1')).toBe(2);
  });

  it('the token grows with every claim and release, and fences transitions and progress', async () => {
    const store = getStore();
    await create(job('j'));
    const first = (await store.claimJob(claim()))!;
    const token = first.lease!.token;
    await store.saveProgress('j', { step: 1 }, undefined, token + 1);
    expect((await store.getJobById('j'))?.progress).toBeNull();
    await store.saveProgress('j', { step: 1 }, undefined, token);
    expect((await store.getJobById('j'))?.progress).toEqual({ step: 1 });
    expect(await store.transitionJob('j', 'running', 'succeeded', {}, { lease_token: token + 1 })).toBeNull();
    // Taken back (released): the old holder can no longer write, even before anyone claims it again.
    expect(await store.transitionJob('j', 'running', 'queued', { started_at: null, lease: null }, { lease_token: token })).toMatchObject({
      id: 'j',
      status: 'queued',
    });
    expect(await store.getJobById('j')).toMatchObject({ status: 'queued', lease: null, started_at: null });
    await store.saveProgress('j', { step: 2 }, undefined, token);
    const again = (await store.claimJob(claim({ owner: 'runner-b' })))!;
    expect(again.lease!.token).toBeGreaterThan(token + 1);
    expect(again.attempts).toBe(2);
    expect(await store.transitionJob('j', 'running', 'succeeded', {}, { lease_token: token })).toBeNull();
    await store.saveProgress('j', { step: 3 }, undefined, token);
    expect((await store.getJobById('j'))?.progress).toEqual({ step: 1 });
    expect(await store.transitionJob('j', 'running', 'succeeded', { completed_at: T0 + 5 }, { lease_token: again.lease!.token })).toMatchObject({
      id: 'j',
      status: 'succeeded',
    });
  });

  it("renewLease extends the holder's lease and says the status; null once the lease is gone", async () => {
    const store = getStore();
    await create(job('j'));
    const { lease } = (await store.claimJob(claim()))!;
    expect(await store.renewLease('j', lease!.token, T0 + 99_000)).toBe('running');
    expect((await store.getJobById('j'))?.lease?.expires_at).toBe(T0 + 99_000);
    expect(await store.renewLease('j', lease!.token + 1, T0 + 200_000)).toBeNull();
    await store.transitionJob('j', 'running', 'canceling');
    expect(await store.renewLease('j', lease!.token, T0 + 100_000)).toBe('canceling');
    await store.transitionJob('j', 'canceling', 'canceled', { lease: null });
    expect(await store.renewLease('j', lease!.token, T0 + 101_000)).toBeNull();
    expect(await store.renewLease('missing', 1, T0)).toBeNull();
  });

  it('listExpiredLeases: running or canceling jobs whose lease ran out (or that have none); taking one back needs it still expired', async () => {
    const store = getStore();
    await create(job('old'), job('live', { account_id: 'acc2' }), job('bare', { account_id: 'acc3' }), job('queued', { account_id: 'acc4' }));
    const old = (await store.claimJob(claim({ now: T0 })))!;
    await store.claimJob(claim({ account_id: 'acc2', now: T0 + 20_000 }));
    // A job moved to running without a claim (as before leases existed).
    await store.transitionJob('bare', 'queued', 'running', { started_at: T0 });
    const now = T0 + LEASE + 1;
    expect((await store.listExpiredLeases(now, 10)).map((j) => j.id)).toEqual(['old', 'bare']);
    expect((await store.listExpiredLeases(now, 1)).map((j) => j.id)).toEqual(['old']);
    // Renewed in the meantime: no longer expired, so it is not taken.
    await store.renewLease('old', old.lease!.token, now + LEASE);
    const guard = { lease_token: old.lease!.token, lease_expired_before: now };
    expect(await store.transitionJob('old', 'running', 'queued', { lease: null }, guard)).toBeNull();
    expect(await store.transitionJob('bare', 'running', 'queued', { lease: null }, { lease_expired_before: now })).toMatchObject({
      id: 'bare',
      status: 'queued',
    });
    expect((await store.listExpiredLeases(now, 10)).map((j) => j.id)).toEqual([]);
    expect((await store.listExpiredLeases(now + 2 * LEASE, 10)).map((j) => j.id)).toEqual(['old', 'live']);
  });

  it("listAccountsWithQueuedJobs gives each account's last claim time, which a refused claim leaves alone", async () => {
    const store = getStore();
    await create(job('a1'), job('a2'), job('b1', { account_id: 'acc2' }), job('b2', { account_id: 'acc2' }));
    await store.claimJob(claim({ now: T0 + 10 }));
    await store.claimJob(claim({ account_id: 'acc2', now: T0 + 20 }));
    // acc1 is at its limit of 1: nothing starts, and its last claim stays T0 + 10.
    expect(await store.claimJob(claim({ now: T0 + 30 }))).toBeNull();
    expect(await store.listAccountsWithQueuedJobs(10)).toEqual([
      { account_id: 'acc1', oldest_seq: expect.any(Number), last_claimed_at: T0 + 10, queued: 1 },
      { account_id: 'acc2', oldest_seq: expect.any(Number), last_claimed_at: T0 + 20, queued: 1 },
    ]);
  });

  it("a fenced output commit stores the asset only while the run holds the job's lease", async () => {
    const store = getStore();
    await create(job('j'));
    const { lease } = (await store.claimJob(claim()))!;
    const blob = (key: string) => ({ key, hash: `blake3:${key.padEnd(64, '0')}`, size: 3 });
    const fence = { job_id: 'j', lease_token: lease!.token };
    const kept = await store.commitAsset(blob('b1'), newAsset('o1', 'b1', { job_id: 'j' }), fence);
    expect(kept.asset.id).toBe('o1');
    await expect(
      store.commitAsset(blob('b2'), newAsset('o2', 'b2', { job_id: 'j' }), { ...fence, lease_token: lease!.token + 1 }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // Taken back: the old holder's token fences it out.
    await store.transitionJob('j', 'running', 'queued', { started_at: null, lease: null }, { lease_token: lease!.token });
    await expect(store.commitAsset(blob('b3'), newAsset('o3', 'b3', { job_id: 'j' }), fence)).rejects.toBeInstanceOf(LeaseLostError);
    // Nothing was written by the refused commits: the same ids commit unfenced.
    for (const [id, key] of [
      ['o2', 'b2'],
      ['o3', 'b3'],
    ])
      expect((await store.commitAsset(blob(key), newAsset(id, key))).blob_created).toBe(true);
  });
}
