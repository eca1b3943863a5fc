// The scheduler over the memory store: tier limits, FIFO per account, turns
// across accounts, queue bound, engine capacity, CAS races between two
// instances, kick coalescing and credits. Every run is a promise the test
// settles by hand, so "running" lasts exactly as long as a test wants.
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../core/errors.ts';
import { type CreditsProvider, checkCredits } from '../../core/jobs/credits.ts';
import { createScheduler, type Scheduler, type SchedulerOptions } from '../../core/jobs/scheduler.ts';
import { createTierLimits, DEFAULT_TIER_LIMITS } from '../../core/jobs/tiers.ts';
import type { Logger } from '../../core/types.ts';
import { createMemoryStorage } from '../../storage/memory/index.ts';
import type { JobSummary, MetadataStore } from '../../storage/types.ts';

interface Deferred {
  resolve(): void;
  reject(err: unknown): void;
}

/** A store, a scheduler over it, and runs that last until `finish(id)`. */
function harness(options: Partial<SchedulerOptions> & { store?: MetadataStore } = {}) {
  const store = options.store ?? createMemoryStorage().metadata;
  const started: JobSummary[] = [];
  const pending = new Map<string, Deferred>();
  const run = async (job: JobSummary) => {
    started.push(job);
    await new Promise<void>((resolve, reject) => pending.set(job.id, { resolve, reject }));
    await store.transitionJob(job.id, 'running', 'succeeded', { completed_at: 1 });
  };
  const scheduler = createScheduler({ run, now: () => 1_000, ...options, store });
  let n = 0;
  const submit = async (accountId: string, count = 1, priority?: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = `${accountId}-${++n}`;
      await store.createJob({ id, account_id: accountId, status: 'queued', workflow: {}, created_at: 0, expires_at: 1e15, priority });
      ids.push(id);
    }
    return ids;
  };
  const finish = (id: string) => {
    const d = pending.get(id);
    if (!d) throw new Error(`${id} is not running`);
    pending.delete(id);
    d.resolve();
  };
  const ids = () => started.map((j) => j.id);
  return { store, scheduler, started, ids, submit, finish, pending };
}

const account = (store: MetadataStore, id: string, tier: string) => store.upsertAccount({ id, tier });
/** Lets kicked passes (a timer, then store microtasks) run. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};
const activeOf = (store: MetadataStore, accountId: string) => store.countJobs(['running', 'canceling'], accountId);

describe('tier limits', () => {
  it('defaults to free 1, standard 1, creator 3, pro 5; unknown tiers get the free limit', () => {
    const limits = createTierLimits();
    expect(DEFAULT_TIER_LIMITS).toEqual({ free: 1, standard: 1, creator: 3, pro: 5 });
    expect(['free', 'standard', 'creator', 'pro', 'default', 'nope'].map(limits.limitOf)).toEqual([1, 1, 3, 5, 1, 1]);
  });

  it('merges configured limits over the defaults and honours the fallback tier', () => {
    const limits = createTierLimits({ free: 2, enterprise: 20 }, 'creator');
    expect(['free', 'pro', 'enterprise', 'default'].map(limits.limitOf)).toEqual([2, 5, 20, 3]);
    expect(() => createTierLimits({ pro: -1 })).toThrow(RangeError);
    expect(() => createTierLimits({ pro: 1.5 })).toThrow(RangeError);
  });
});

describe('scheduler: limits per tier', () => {
  it('starts up to the tier limit per account: free 1, creator 3, pro 5', async () => {
    const h = harness();
    await account(h.store, 'f', 'free');
    await account(h.store, 'c', 'creator');
    await account(h.store, 'p', 'pro');
    await account(h.store, 'd', 'default');
    for (const a of ['f', 'c', 'p', 'd']) await h.submit(a, 8);
    expect(await h.scheduler.pass()).toBe(10);
    expect([h.scheduler.running('f'), h.scheduler.running('c'), h.scheduler.running('p'), h.scheduler.running('d')]).toEqual([1, 3, 5, 1]);
    expect(h.scheduler.running()).toBe(10);
    expect(await activeOf(h.store, 'p')).toBe(5);
    // Nothing more fits until a run settles.
    expect(await h.scheduler.pass()).toBe(0);
  });

  it("takes configured limits, including one for the stores' default tier", async () => {
    const h = harness({ tierLimits: { free: 2, pro: 1, default: 4 } });
    await account(h.store, 'f', 'free');
    await account(h.store, 'p', 'pro');
    await account(h.store, 'd', 'default');
    for (const a of ['f', 'p', 'd']) await h.submit(a, 6);
    expect(await h.scheduler.pass()).toBe(7);
    expect([h.scheduler.running('f'), h.scheduler.running('p'), h.scheduler.running('d')]).toEqual([2, 1, 4]);
  });

  it('reads the tier from tierOf when given, and defaultTier names the fallback', async () => {
    const tierOf = vi.fn((id: string) => (id === 'big' ? 'pro' : 'mystery'));
    const h = harness({ tierOf, defaultTier: 'creator' });
    await h.submit('big', 6);
    await h.submit('small', 6);
    expect(await h.scheduler.pass()).toBe(8);
    expect([h.scheduler.running('big'), h.scheduler.running('small')]).toEqual([5, 3]);
    expect(tierOf).toHaveBeenCalledWith('big');
  });

  it('counts jobs running elsewhere (in the store) against the limit', async () => {
    const h = harness();
    await account(h.store, 'a', 'creator');
    const [other] = await h.submit('a');
    // Another instance started this one.
    expect(await h.store.transitionJob(other, 'queued', 'running', { started_at: 1, add_attempts: 1 })).toMatchObject({
      id: other,
      status: 'running',
    });
    const [canceling] = await h.submit('a');
    await h.store.transitionJob(canceling, 'queued', 'running', {});
    await h.store.transitionJob(canceling, 'running', 'canceling', {});
    await h.submit('a', 3);
    expect(await h.scheduler.pass()).toBe(1);
    expect(h.scheduler.running('a')).toBe(1);
    expect(await activeOf(h.store, 'a')).toBe(3);
  });

  it('holds a slot until run settles even if the row already left running', async () => {
    const h = harness();
    await account(h.store, 'a', 'free');
    const [first, second] = await h.submit('a', 2);
    await h.scheduler.pass();
    await h.store.transitionJob(first, 'running', 'failed', { completed_at: 2 });
    expect(await h.scheduler.pass()).toBe(0);
    h.finish(first);
    await settle();
    expect(h.ids()).toEqual([first, second]);
  });
});

describe('scheduler: the listing of accounts', () => {
  /** A memory store counting its listings (the turns of accounts) and peeks. */
  function counting() {
    const memory = createMemoryStorage().metadata;
    const calls = { listings: 0, peeks: 0 };
    const store: MetadataStore = {
      ...memory,
      listAccountsWithQueuedJobs(limit) {
        calls.listings++;
        return memory.listAccountsWithQueuedJobs(limit);
      },
      peekQueuedAccounts(limit) {
        calls.peeks++;
        return memory.peekQueuedAccounts!(limit);
      },
    };
    return { store, calls };
  }

  it('a pass over no queue or one account queued does not list accounts; two or more are listed in turn order', async () => {
    const { store, calls } = counting();
    await account(store, 'a', 'pro');
    await account(store, 'b', 'pro');
    const h = harness({ store });
    expect(await h.scheduler.pass()).toBe(0);
    await h.submit('a', 3);
    expect(await h.scheduler.pass()).toBe(3);
    expect(calls).toEqual({ listings: 0, peeks: 2 });
    await h.submit('b', 1);
    await h.submit('a', 1);
    expect(await h.scheduler.pass()).toBe(2);
    expect(calls).toEqual({ listings: 1, peeks: 3 });
    // Served longest ago: b (never), then a.
    expect(h.ids().slice(3)).toEqual(['b-4', 'a-5']);
    await h.scheduler.close();
  });

  it('a store without peekQueuedAccounts is listed on every pass', async () => {
    const { store, calls } = counting();
    await account(store, 'a', 'pro');
    const { peekQueuedAccounts: _, ...without } = store;
    const h = harness({ store: without as MetadataStore });
    await h.submit('a', 2);
    expect(await h.scheduler.pass()).toBe(2);
    expect(calls).toEqual({ listings: 1, peeks: 0 });
    await h.scheduler.close();
  });
});

describe('scheduler: order', () => {
  it("starts each account's jobs in submission order", async () => {
    const h = harness();
    await account(h.store, 'a', 'free');
    const jobs = await h.submit('a', 4);
    await h.scheduler.pass();
    for (const id of jobs) {
      expect(h.ids().at(-1)).toBe(id);
      h.finish(id);
      await settle();
    }
    expect(h.ids()).toEqual(jobs);
  });

  it('starts the oldest jobs first when several fit at once', async () => {
    const h = harness();
    await account(h.store, 'a', 'creator');
    const jobs = await h.submit('a', 5);
    await h.scheduler.pass();
    expect(h.ids()).toEqual(jobs.slice(0, 3));
  });

  it("is fair: B's one job goes before A's 2nd..10th when the engine takes one job", async () => {
    let h: ReturnType<typeof harness>;
    h = harness({ engineCapacity: () => 1 - h.scheduler.running() });
    await account(h.store, 'a', 'pro');
    await account(h.store, 'b', 'pro');
    const aJobs = await h.submit('a', 10);
    expect(await h.scheduler.pass()).toBe(1);
    const [bJob] = await h.submit('b', 1);
    h.scheduler.kick();
    await settle();
    expect(h.ids()).toEqual([aJobs[0]]);
    h.finish(aJobs[0]);
    await settle();
    expect(h.ids()).toEqual([aJobs[0], bJob]);
    h.finish(bJob);
    await settle();
    expect(h.ids()).toEqual([aJobs[0], bJob, aJobs[1]]);
  });

  it('takes turns across accounts with backlogs, each in FIFO order', async () => {
    let h: ReturnType<typeof harness>;
    h = harness({ engineCapacity: () => 1 - h.scheduler.running() });
    for (const a of ['a', 'b', 'c']) await account(h.store, a, 'pro');
    const a = await h.submit('a', 3);
    const b = await h.submit('b', 3);
    const c = await h.submit('c', 2);
    await h.scheduler.pass();
    for (let i = 0; i < 8; i++) {
      h.finish(h.ids().at(-1)!);
      await settle();
    }
    expect(h.ids()).toEqual([a[0], b[0], c[0], a[1], b[1], c[1], a[2], b[2]]);
  });

  it("starts an account's higher-priority jobs first, FIFO within a priority", async () => {
    const h = harness();
    await account(h.store, 'a', 'free');
    const [plain1] = await h.submit('a', 1);
    const [low] = await h.submit('a', 1, -3);
    const [urgent1] = await h.submit('a', 1, 9);
    const [plain2] = await h.submit('a', 1, 0);
    const [urgent2] = await h.submit('a', 1, 9);
    await h.scheduler.pass();
    for (let i = 0; i < 5; i++) {
      h.finish(h.ids().at(-1)!);
      await settle();
    }
    expect(h.ids()).toEqual([urgent1, urgent2, plain1, plain2, low]);
  });

  it("priority orders one account's line only: accounts still take turns", async () => {
    let h: ReturnType<typeof harness>;
    h = harness({ engineCapacity: () => 1 - h.scheduler.running() });
    for (const a of ['a', 'b']) await account(h.store, a, 'pro');
    const a = await h.submit('a', 2);
    const [aUrgent] = await h.submit('a', 1, 50);
    const b = await h.submit('b', 2, -50);
    await h.scheduler.pass();
    for (let i = 0; i < 5; i++) {
      h.finish(h.ids().at(-1)!);
      await settle();
    }
    expect(h.ids()).toEqual([aUrgent, b[0], a[0], b[1], a[1]]);
  });

  it('an account at its limit does not block others from free engine slots', async () => {
    const h = harness({ engineCapacity: () => 3 - h.scheduler.running() });
    await account(h.store, 'a', 'free');
    await account(h.store, 'b', 'free');
    const aJobs = await h.submit('a', 5);
    const [bJob] = await h.submit('b');
    expect(await h.scheduler.pass()).toBe(2);
    expect(h.ids()).toEqual([aJobs[0], bJob]);
  });

  it('skips a job that was canceled while queued', async () => {
    const h = harness();
    await account(h.store, 'a', 'free');
    const [gone, kept] = await h.submit('a', 2);
    await h.store.transitionJob(gone, 'queued', 'canceled', { completed_at: 1 });
    await h.scheduler.pass();
    expect(h.ids()).toEqual([kept]);
  });
});

describe('scheduler: starting a job', () => {
  it('hands run the job as moved: running, started_at, attempts + 1', async () => {
    const h = harness({ now: () => 4242 });
    await account(h.store, 'a', 'free');
    const [id] = await h.submit('a');
    await h.scheduler.pass();
    expect(h.started[0]).toMatchObject({ id, status: 'running', started_at: 4242, attempts: 1 });
    expect(await h.store.getJobById(id)).toMatchObject({ status: 'running', started_at: 4242, attempts: 1 });
  });

  it('frees the slot and logs when run rejects or throws', async () => {
    const logger: Logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const store = createMemoryStorage().metadata;
    const seen: string[] = [];
    const scheduler: Scheduler = createScheduler({
      store,
      logger,
      tierLimits: { free: 10 },
      engineCapacity: () => 2 - scheduler.running(),
      run: (job) => {
        seen.push(job.id);
        if (job.id === 'j1') throw new Error('sync boom');
        if (job.id === 'j2') return Promise.reject(new Error('async boom'));
        return new Promise<void>(() => {});
      },
    });
    for (const id of ['j1', 'j2', 'j3', 'j4', 'j5']) {
      await store.createJob({ id, account_id: 'a', status: 'queued', workflow: {}, created_at: 0, expires_at: 1e15 });
    }
    expect(await scheduler.pass()).toBe(2);
    await vi.waitFor(() => expect(seen).toEqual(['j1', 'j2', 'j3', 'j4']));
    expect(scheduler.running()).toBe(2);
    expect(logger.error).toHaveBeenCalledWith('job run failed', expect.objectContaining({ job_id: 'j1' }));
    expect(logger.error).toHaveBeenCalledWith('job run failed', expect.objectContaining({ job_id: 'j2' }));
    await scheduler.close();
  });
});

describe('scheduler: starting at submission', () => {
  const newJob = (id: string, account_id: string) => ({ id, account_id, status: 'queued', workflow: {}, created_at: 0, expires_at: 1e15 });

  it("a submission whose account's line is the only one starts the job with its insert, handed to run after enqueue answers, with no pass", async () => {
    const store = createMemoryStorage().metadata;
    const look = vi.spyOn(store, 'peekQueuedAccounts');
    const listing = vi.spyOn(store, 'listAccountsWithQueuedJobs');
    const h = harness({ store, now: () => 777 });
    const { job, ahead, started, start } = await h.scheduler.enqueue(newJob('a-1', 'a'));
    // The answer is the submission's: the job as it was queued, and nothing runs until the caller says.
    expect({ status: job.status, ahead, started }).toEqual({ status: 'queued', ahead: 0, started: true });
    expect(h.ids()).toEqual([]);
    expect(await store.getJobById('a-1')).toMatchObject({ status: 'running', started_at: 777, attempts: 1 });
    start();
    expect(h.ids()).toEqual(['a-1']);
    start(); // once only
    expect(h.ids()).toEqual(['a-1']);
    expect(h.started[0]).toMatchObject({ id: 'a-1', status: 'running', started_at: 777 });
    expect(h.scheduler.running('a')).toBe(1);
    expect(look).not.toHaveBeenCalled();
    expect(listing).not.toHaveBeenCalled();
    // Its end frees the slot as a passed job's does: the next submission starts too.
    h.finish('a-1');
    await vi.waitFor(() => expect(h.scheduler.running('a')).toBe(0));
    // A caller that never says still has it run, after the current turn.
    expect((await h.scheduler.enqueue(newJob('a-2', 'a'))).started).toBe(true);
    await vi.waitFor(() => expect(h.ids()).toEqual(['a-1', 'a-2']));
  });

  it("another account's queued job keeps its turn: the submission only queues, and a pass serves the other first", async () => {
    const h = harness({ tierLimits: { free: 5 } });
    const [theirs] = await h.submit('b');
    const { started } = await h.scheduler.enqueue(newJob('a-1', 'a'));
    expect(started).toBe(false);
    expect(await h.store.getJobById('a-1')).toMatchObject({ status: 'queued' });
    expect(await h.scheduler.pass()).toBe(2);
    expect(h.ids()).toEqual([theirs, 'a-1']);
  });

  it("the account's oldest queued job is the one that starts, in its pick order; the new one waits for a pass", async () => {
    const h = harness();
    const [older] = await h.submit('a');
    const { job, started } = await h.scheduler.enqueue(newJob('a-new', 'a'));
    expect({ id: job.id, status: job.status, started }).toEqual({ id: 'a-new', status: 'queued', started: false });
    await vi.waitFor(() => expect(h.ids()).toEqual([older]));
    expect(await h.store.getJobById('a-new')).toMatchObject({ status: 'queued' });
  });

  it('at the tier limit, with the engine full, or closed, a submission only queues', async () => {
    const h = harness();
    expect((await h.scheduler.enqueue(newJob('a-1', 'a'))).started).toBe(true);
    await vi.waitFor(() => expect(h.ids()).toEqual(['a-1']));
    // free: one at a time.
    expect((await h.scheduler.enqueue(newJob('a-2', 'a'))).started).toBe(false);
    const full = harness({ engineCapacity: () => 0 });
    expect((await full.scheduler.enqueue(newJob('b-1', 'b'))).started).toBe(false);
    const closed = harness();
    await closed.scheduler.close();
    expect((await closed.scheduler.enqueue(newJob('c-1', 'c'))).started).toBe(false);
    await settle();
    expect([...full.ids(), ...closed.ids()]).toEqual([]);
  });

  it('a pass during the claim leaves its engine slot alone', async () => {
    let free = 1;
    const h = harness({ tierLimits: { free: 5 }, engineCapacity: () => free - h.scheduler.running() });
    await h.submit('a', 2);
    const submitting = h.scheduler.enqueue(newJob('a-new', 'a'));
    // Issued while the claim (of a-1, the account's oldest) holds the only slot: it starts nothing.
    const passing = h.scheduler.pass();
    expect((await submitting).started).toBe(false);
    expect(await passing).toBe(0);
    await vi.waitFor(() => expect(h.ids()).toEqual(['a-1']));
    free = 2;
    expect(await h.scheduler.pass()).toBe(1);
    expect(h.ids()).toEqual(['a-1', 'a-2']);
  });

  it('a claim that fails leaves the job queued for a pass, and logs', async () => {
    const logger: Logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const store = createMemoryStorage().metadata;
    vi.spyOn(store, 'claimJob').mockRejectedValueOnce(new Error('disk gone'));
    const h = harness({ store, logger });
    const { started } = await h.scheduler.enqueue(newJob('a-1', 'a'));
    expect(started).toBe(false);
    expect(logger.error).toHaveBeenCalledWith('claim at submission failed', expect.objectContaining({ account_id: 'a' }));
    expect(await h.scheduler.pass()).toBe(1);
    expect(h.ids()).toEqual(['a-1']);
  });
});

describe('scheduler: engine capacity', () => {
  it('starts no more than the engine takes, and more as it frees', async () => {
    let h: ReturnType<typeof harness>;
    h = harness({ engineCapacity: () => 2 - h.scheduler.running() });
    for (const a of ['a', 'b', 'c', 'd']) await account(h.store, a, 'pro');
    for (const a of ['a', 'b', 'c', 'd']) await h.submit(a, 2);
    expect(await h.scheduler.pass()).toBe(2);
    expect(await h.scheduler.pass()).toBe(0);
    h.finish(h.ids()[0]);
    await settle();
    expect(h.scheduler.running()).toBe(2);
    expect(h.ids()).toHaveLength(3);
  });

  it('spends from what the engine offered at the start of a pass even if it does not count runs at once', async () => {
    const h = harness({ engineCapacity: () => 2 });
    await account(h.store, 'a', 'pro');
    await h.submit('a', 5);
    expect(await h.scheduler.pass()).toBe(2);
  });

  it('starts nothing while the engine is full', async () => {
    const h = harness({ engineCapacity: () => 0 });
    await h.submit('a', 2);
    expect(await h.scheduler.pass()).toBe(0);
    expect(await h.store.countJobs(['queued'])).toBe(2);
  });
});

describe('scheduler: queue bound', () => {
  const newJob = (id: string, account_id: string) => ({ id, account_id, status: 'queued', workflow: {}, created_at: 0, expires_at: 1e15 });

  // The engine has no room in these: a submission only queues (none starts the account's next job, see below).
  it('answers 429 queue_full with Retry-After once the queued count reaches the bound; a stored job comes with the jobs ahead of it', async () => {
    const h = harness({ maxQueueDepth: 3, engineCapacity: () => 0 });
    await h.submit('a', 2);
    const { job, ahead } = await h.scheduler.enqueue(newJob('a-new', 'a'));
    expect(job).toMatchObject({ id: 'a-new', status: 'queued' });
    expect(job).not.toHaveProperty('queued_before');
    expect(ahead).toBe(2);
    const err = await h.scheduler.enqueue(newJob('c-new', 'c')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'queue_full', status: 429, headers: { 'Retry-After': '10' } });
    expect(await h.store.getJobById('c-new')).toBeNull();
  });

  it('counts only queued jobs, and takes a configured Retry-After', async () => {
    const h = harness({ maxQueueDepth: 2, retryAfterSeconds: 2.5, tierLimits: { free: 2 } });
    await h.submit('a', 2);
    await expect(h.scheduler.enqueue(newJob('a-new', 'a'))).rejects.toMatchObject({ headers: { 'Retry-After': '3' } });
    await h.scheduler.pass();
    await expect(h.scheduler.enqueue(newJob('a-new', 'a'))).resolves.toMatchObject({ ahead: 0 });
  });

  it('one account stops at its own bound while others still queue', async () => {
    const h = harness({ maxQueueDepth: 10, maxQueuedPerAccount: 2, engineCapacity: () => 0 });
    await h.submit('a', 2);
    await expect(h.scheduler.enqueue(newJob('a-new', 'a'))).rejects.toMatchObject({ code: 'queue_full', status: 429 });
    await expect(h.scheduler.enqueue(newJob('b-new', 'b'))).resolves.toMatchObject({ ahead: 2 });
  });
});

describe('scheduler: two instances over one store', () => {
  it('starts each job at most once when passes race', async () => {
    const store = createMemoryStorage().metadata;
    const one = harness({ store, tierLimits: { free: 50 } });
    const two = harness({ store, tierLimits: { free: 50 } });
    for (const a of ['a', 'b', 'c']) await one.submit(a, 10);
    const [x, y] = await Promise.all([one.scheduler.pass(), two.scheduler.pass()]);
    expect(x + y).toBe(30);
    const all = [...one.ids(), ...two.ids()];
    expect(new Set(all).size).toBe(30);
    const rows = await store.listJobsByStatus(['running'], 100);
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.attempts === 1)).toBe(true);
  });

  it('accounts take turns across instances: the one another instance served last waits', async () => {
    const store = createMemoryStorage().metadata;
    let clock = 1_000;
    // One free engine slot each: every pass starts one job.
    const one = harness({ store, now: () => clock, engineCapacity: () => 1 - one.scheduler.running(), tierLimits: { free: 5 } });
    const two = harness({ store, now: () => clock, engineCapacity: () => 1 - two.scheduler.running(), tierLimits: { free: 5 } });
    await one.submit('a', 3);
    await one.submit('b', 2);
    // The first instance serves a (its oldest job is the oldest of all).
    expect(await one.scheduler.pass()).toBe(1);
    expect(one.ids()).toEqual(['a-1']);
    clock += 10;
    // The second instance never served anyone, yet knows a was served last: b goes first.
    expect(await two.scheduler.pass()).toBe(1);
    expect(two.ids()).toEqual(['b-4']);
    clock += 10;
    one.finish('a-1');
    await settle();
    // Back on the first instance: a's turn again, as b was served after it.
    expect(one.ids()).toEqual(['a-1', 'a-2']);
  });

  it('starts nothing when the other instance claimed the jobs after its listing', async () => {
    const store = createMemoryStorage().metadata;
    const one = harness({ store });
    await account(store, 'a', 'creator');
    // The second instance's look at the queue goes stale: the first takes the jobs in between.
    const stale: MetadataStore = {
      ...store,
      async peekQueuedAccounts(limit) {
        const accounts = await store.peekQueuedAccounts!(limit);
        await one.scheduler.pass();
        return accounts;
      },
    };
    const two = harness({ store: stale });
    await one.submit('a', 3);
    const claim = vi.spyOn(stale, 'claimJob');
    expect(await two.scheduler.pass()).toBe(0);
    // One claim per slot the tier leaves (creator: 3), tried at once as the store writes in order; none starts a job.
    expect(claim.mock.results.length).toBe(3);
    for (const result of claim.mock.results) await expect(result.value).resolves.toBeNull();
    expect(one.ids()).toHaveLength(3);
    expect(two.ids()).toEqual([]);
  });
});

describe('scheduler: kicks', () => {
  it('coalesces many kicks into one pass', async () => {
    const store = createMemoryStorage().metadata;
    // Each pass looks at the queue once.
    const look = vi.spyOn(store, 'peekQueuedAccounts');
    const h = harness({ store });
    await h.submit('a', 3);
    for (let i = 0; i < 50; i++) h.scheduler.kick();
    await settle();
    expect(look).toHaveBeenCalledTimes(1);
    expect(h.ids()).toHaveLength(1);
  });

  it('a kick during a pass gets one more pass after it', async () => {
    const store = createMemoryStorage().metadata;
    const look = vi.spyOn(store, 'peekQueuedAccounts');
    const h = harness({ store });
    await h.submit('a', 1);
    const first = h.scheduler.pass();
    for (let i = 0; i < 10; i++) h.scheduler.kick();
    await first;
    await settle();
    expect(look).toHaveBeenCalledTimes(2);
  });

  it('a settled run kicks: the next job starts without a pass from outside', async () => {
    const h = harness();
    const [first, second] = await h.submit('a', 2);
    await h.scheduler.pass();
    h.finish(first);
    await vi.waitFor(() => expect(h.ids()).toEqual([first, second]));
  });

  it('polls when asked to, picking up jobs nobody kicked for', async () => {
    const h = harness({ pollIntervalMs: 5 });
    await h.submit('a');
    await vi.waitFor(() => expect(h.ids()).toHaveLength(1));
    await h.scheduler.close();
  });
});

describe('scheduler: close', () => {
  it('starts nothing after close and does not wait for runs under way', async () => {
    const h = harness();
    const [first] = await h.submit('a', 3);
    await h.scheduler.pass();
    await h.scheduler.close(); // resolves although `first` is still running
    expect(h.pending.has(first)).toBe(true);
    h.finish(first);
    await settle();
    expect(await h.scheduler.pass()).toBe(0);
    expect(h.ids()).toEqual([first]);
  });
});

describe('credits', () => {
  const only = (...funded: string[]): CreditsProvider => ({ hasCredits: async (id) => funded.includes(id) });

  it('without a provider every account is unlimited', async () => {
    await expect(checkCredits(undefined, 'anyone')).resolves.toBeUndefined();
  });

  it('answers 402 insufficient_credits for an account with none left', async () => {
    await expect(checkCredits(only('rich'), 'rich')).resolves.toBeUndefined();
    const err = await checkCredits(only('rich'), 'poor').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'insufficient_credits', status: 402 });
  });

  it("admit checks credits per account; the queue bound is the enqueue's", async () => {
    const h = harness({ credits: only('rich'), maxQueueDepth: 1 });
    await expect(h.scheduler.admit('rich')).resolves.toBeUndefined();
    await expect(h.scheduler.admit('poor')).rejects.toMatchObject({ code: 'insufficient_credits' });
    await h.submit('rich');
    await expect(h.scheduler.admit('poor')).rejects.toMatchObject({ code: 'insufficient_credits' });
    await expect(h.scheduler.admit('rich')).resolves.toBeUndefined();
  });
});
