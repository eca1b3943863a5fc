// A run's end and the claims that fill its slot (the `ending` the scheduler
// gives each run). Over a store that writes in call order (serialWrites:
// memory, SQLite) the slot is free as soon as the job leaves the engine, the
// end is written just ahead of the claims, and a pass claims all its free
// slots at once; on SQLite the end and the claim then share one commit. Over
// a store that may reorder writes (a pool), the end is written at once and
// the slot held until the run settles, as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createScheduler, type Ending, type SchedulerOptions } from '../../core/jobs/scheduler.ts';
import type { Logger } from '../../core/types.ts';
import { createMemoryBlobStore } from '../../storage/memory/blob-store.ts';
import { createMemoryStorage } from '../../storage/memory/index.ts';
import { createSqliteStorage, type SqliteDatabaseLike } from '../../storage/sql/sqlite.ts';
import type { JobSummary, MetadataStore } from '../../storage/types.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphrun-ending-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The store's ends and claims in the order they were called and answered, and how many claims were in flight at most. */
function traced(store: MetadataStore) {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const wrapped: MetadataStore = {
    ...store,
    transitionJob(id, from, to, patch, guard) {
      calls.push(`end ${id}`);
      return store.transitionJob(id, from, to, patch, guard);
    },
    async claimJob(claim) {
      calls.push(`claim ${claim.account_id}`);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        const job = await store.claimJob(claim);
        calls.push(`claimed ${job?.id ?? null}`);
        return job;
      } finally {
        inFlight--;
      }
    },
  };
  return { store: wrapped, calls, maxInFlight: () => maxInFlight };
}

/** A memory store with `tier` for account a, counting the passes over it (each pass looks at the queue once). */
async function countingPasses(tier: string) {
  const memory = createMemoryStorage().metadata;
  await memory.upsertAccount({ id: 'a', tier });
  const counted = { memory, passes: 0, store: memory };
  counted.store = {
    ...memory,
    peekQueuedAccounts(limit) {
      counted.passes++;
      return memory.peekQueuedAccounts!(limit);
    },
  };
  return counted;
}

/** A scheduler whose runs last until `finish(id)`, then end their job through `ending` (`afterEnding` is called right after). */
function harness(store: MetadataStore, options: Partial<SchedulerOptions> = {}, afterEnding?: () => void) {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  /** scheduler.running() just after each run called `ending`. */
  const runningAtEnd: number[] = [];
  const run = async (job: JobSummary, ending: Ending) => {
    started.push(job.id);
    await new Promise<void>((resolve) => gates.set(job.id, resolve));
    const written = ending(() => store.transitionJob(job.id, 'running', 'succeeded', { completed_at: 2, lease: null }));
    runningAtEnd.push(scheduler.running());
    afterEnding?.();
    await written;
  };
  const scheduler = createScheduler({ store, run, now: () => 1_000, ...options });
  let n = 0;
  const submit = async (accountId: string, count: number) => {
    for (let i = 0; i < count; i++) {
      await store.createJob({ id: `${accountId}-${++n}`, account_id: accountId, status: 'queued', workflow: {}, created_at: 0, expires_at: 1e15 });
    }
  };
  const finish = (...ids: string[]) => {
    for (const id of ids) {
      const open = gates.get(id);
      if (!open) throw new Error(`${id} is not running`);
      gates.delete(id);
      open();
    }
  };
  return { scheduler, started, runningAtEnd, submit, finish };
}

/** Account `a` of `tier` in a memory store whose ends and claims are traced, and a harness over it. */
async function tracedHarness(tier: string) {
  const memory = createMemoryStorage().metadata;
  await memory.upsertAccount({ id: 'a', tier });
  const t = traced(memory);
  return { memory, t, h: harness(t.store) };
}

const statusOf = async (store: MetadataStore, id: string) => (await store.getJobById(id))?.status;

describe('ending, over a store that writes in call order', () => {
  it('frees the slot at once and writes the end just ahead of the claim that fills it, whose count sees it', async () => {
    const { memory, t, h } = await tracedHarness('free');
    await h.submit('a', 2);
    await h.scheduler.pass();
    expect(h.started).toEqual(['a-1']);
    t.calls.length = 0;
    h.finish('a-1');
    await vi.waitFor(() => expect(h.started).toEqual(['a-1', 'a-2']));
    // The free tier's one slot: a claim before the end would have come back empty.
    expect(t.calls).toEqual(['end a-1', 'claim a', 'claimed a-2']);
    expect(h.runningAtEnd).toEqual([0]);
    await vi.waitFor(async () => expect(await statusOf(memory, 'a-1')).toBe('succeeded'));
    await h.scheduler.close();
  });

  it('claims every free slot of a pass at once, the ends that freed them written first', async () => {
    const { t, h } = await tracedHarness('pro');
    await h.submit('a', 10);
    expect(await h.scheduler.pass()).toBe(5);
    expect(t.maxInFlight()).toBe(5);
    t.calls.length = 0;
    h.finish('a-1', 'a-2', 'a-3', 'a-4', 'a-5');
    await vi.waitFor(() => expect(h.started).toHaveLength(10));
    const firstClaim = t.calls.indexOf('claim a');
    expect(t.calls.slice(0, firstClaim).sort()).toEqual(['end a-1', 'end a-2', 'end a-3', 'end a-4', 'end a-5']);
    expect(t.calls.filter((c) => c.startsWith('claimed'))).toEqual(['claimed a-6', 'claimed a-7', 'claimed a-8', 'claimed a-9', 'claimed a-10']);
    await h.scheduler.close();
  });

  it('starts the jobs claimed beside a claim that failed, and the pass reports the failure', async () => {
    const memory = createMemoryStorage().metadata;
    for (const id of ['a', 'b', 'c']) await memory.upsertAccount({ id, tier: 'pro' });
    let failB = true;
    const store: MetadataStore = {
      ...memory,
      async claimJob(claim) {
        if (claim.account_id === 'b' && failB) throw new Error('database is locked');
        return memory.claimJob(claim);
      },
    };
    const h = harness(store);
    await h.submit('a', 1);
    await h.submit('b', 1);
    await h.submit('c', 1);
    await expect(h.scheduler.pass()).rejects.toThrow('database is locked');
    expect(h.started.sort()).toEqual(['a-1', 'c-3']);
    expect(await statusOf(memory, 'b-2')).toBe('queued');
    failB = false;
    expect(await h.scheduler.pass()).toBe(1);
    expect(h.started).toContain('b-2');
    await h.scheduler.close();
  });

  it('claims no more jobs for an account than it has queued', async () => {
    const { t, h } = await tracedHarness('pro');
    await h.submit('a', 1);
    expect(await h.scheduler.pass()).toBe(1);
    expect(t.calls).toEqual(['claim a', 'claimed a-1']);
    await h.scheduler.close();
  });

  it('a tier lookup that fails while planning leaves the turns as they were', async () => {
    const memory = createMemoryStorage().metadata;
    let slots = 2;
    let failB = true;
    const h = harness(memory, {
      engineCapacity: () => slots - h.scheduler.running(),
      tierOf: async (id) => {
        if (id === 'b' && failB) throw new Error('database is locked');
        return 'pro';
      },
    });
    await h.submit('a', 1);
    await h.submit('b', 1);
    await expect(h.scheduler.pass()).rejects.toThrow('database is locked');
    expect(h.started).toEqual([]);
    failB = false;
    slots = 1;
    // a was planned before b's lookup failed, but never served: it is still first.
    expect(await h.scheduler.pass()).toBe(1);
    expect(h.started).toEqual(['a-1']);
    await h.scheduler.close();
  });

  it('starts the jobs claimed before a claim that throws instead of rejecting', async () => {
    const memory = createMemoryStorage().metadata;
    for (const id of ['a', 'b']) await memory.upsertAccount({ id, tier: 'pro' });
    const store: MetadataStore = {
      ...memory,
      claimJob(claim) {
        if (claim.account_id === 'b') throw new Error('not open');
        return memory.claimJob(claim);
      },
    };
    const h = harness(store);
    await h.submit('a', 1);
    await h.submit('b', 1);
    await expect(h.scheduler.pass()).rejects.toThrow('not open');
    expect(h.started).toEqual(['a-1']);
    expect(await statusOf(memory, 'b-2')).toBe('queued');
    await h.scheduler.close();
  });

  it('tries the claim again once an end written ahead of it failed and was written again', async () => {
    const memory = createMemoryStorage().metadata;
    await memory.upsertAccount({ id: 'a', tier: 'free' });
    let failEnd = true;
    const t = traced({
      ...memory,
      async transitionJob(id, from, to, patch, guard) {
        if (failEnd) {
          failEnd = false;
          throw new Error('disk I/O error');
        }
        return memory.transitionJob(id, from, to, patch, guard);
      },
    });
    const started: string[] = [];
    const scheduler = createScheduler({
      store: t.store,
      now: () => 1_000,
      async run(job, ending) {
        started.push(job.id);
        const write = () => t.store.transitionJob(job.id, 'running', 'succeeded', { completed_at: 2, lease: null });
        // As the runner does: the first try through `ending`, the retry straight.
        await ending(write).catch(() => write());
      },
    });
    for (const id of ['a-1', 'a-2'])
      await t.store.createJob({ id, account_id: 'a', status: 'queued', workflow: {}, created_at: 0, expires_at: 1e15 });
    await scheduler.pass();
    expect(started).toEqual(['a-1']);
    await vi.waitFor(() => expect(started).toEqual(['a-1', 'a-2']));
    // The free tier's one slot: the claim behind the failed end found a-1 still running.
    expect(t.calls.filter((c) => c.startsWith('claimed'))).toEqual(['claimed a-1', 'claimed null', 'claimed a-2']);
    await scheduler.close();
  });

  it('with nothing queued when last looked, an end is written at once and kicks no pass; a submission that queues, or a kick from outside, brings the wait back', async () => {
    const counted = await countingPasses('pro');
    const t = traced(counted.store);
    const h = harness(t.store);
    await h.submit('a', 3);
    expect(await h.scheduler.pass()).toBe(3);
    // This pass saw the queue empty.
    expect(await h.scheduler.pass()).toBe(0);
    const ended = async (id: string) => {
      const before = counted.passes;
      t.calls.length = 0;
      h.finish(id);
      // A few microtasks: the run reaches its `ending`; no turn of the event loop, so no pass, begins.
      for (let i = 0; i < 5; i++) await Promise.resolve();
      return { written: t.calls.includes(`end ${id}`), passes: counted.passes - before };
    };
    expect(await ended('a-1')).toEqual({ written: true, passes: 0 });
    // Nor does one follow it: it would find the queue as empty.
    const before = counted.passes;
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    await vi.waitFor(async () => expect(await statusOf(counted.memory, 'a-1')).toBe('succeeded'));
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(counted.passes).toBe(before);
    // Then something may have queued a job.
    h.scheduler.kick();
    expect(await ended('a-2')).toEqual({ written: false, passes: 0 });
    await vi.waitFor(() => expect(t.calls).toContain('end a-2'));
    // Its pass saw the queue empty again. A submission that starts its own job leaves that so; one that queues does not.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    const job = (id: string) => ({ id, account_id: 'b', status: 'queued', workflow: {}, created_at: 0, expires_at: 1e15 });
    expect((await h.scheduler.enqueue(job('b-1'))).started).toBe(true);
    expect((await h.scheduler.enqueue(job('b-2'))).started).toBe(false); // b's tier (free) runs one at a time
    expect(await ended('a-3')).toEqual({ written: false, passes: 0 });
    await vi.waitFor(() => expect(t.calls).toContain('end a-3'));
    await h.scheduler.close();
  });

  it('a clean end costs one pass, the one its slot was offered to', async () => {
    const counted = await countingPasses('free');
    const { memory } = counted;
    const h = harness(counted.store);
    await h.submit('a', 1);
    expect(await h.scheduler.pass()).toBe(1);
    counted.passes = 0;
    h.finish('a-1');
    await vi.waitFor(async () => expect(await statusOf(memory, 'a-1')).toBe('succeeded'));
    // Every kick the run's end and settling made has had its turn of the event loop.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await h.scheduler.pass();
    // The pass the end kicked, then the one asked for here: the settled run kicked none.
    expect(counted.passes).toBe(2);
    await h.scheduler.close();
  });

  it('a clean end whose claim behind it failed has its slot offered again', async () => {
    const memory = createMemoryStorage().metadata;
    await memory.upsertAccount({ id: 'a', tier: 'free' });
    let failClaims = 0;
    const t = traced({
      ...memory,
      async claimJob(claim) {
        if (failClaims > 0) {
          failClaims--;
          throw new Error('database is locked');
        }
        return memory.claimJob(claim);
      },
    });
    const h = harness(t.store);
    await h.submit('a', 2);
    expect(await h.scheduler.pass()).toBe(1);
    failClaims = 1;
    h.finish('a-1');
    // Nothing else kicks a pass: only the settled run's, after the claim behind its end failed.
    await vi.waitFor(() => expect(h.started).toEqual(['a-1', 'a-2']));
    expect(await statusOf(memory, 'a-1')).toBe('succeeded');
    await h.scheduler.close();
  });

  it('close writes the ends still waiting for a pass, and starts nothing more', async () => {
    const memory = createMemoryStorage().metadata;
    await memory.upsertAccount({ id: 'a', tier: 'free' });
    let closing: Promise<void> | undefined;
    const h = harness(memory, {}, () => {
      closing ??= h.scheduler.close();
    });
    await h.submit('a', 2);
    await h.scheduler.pass();
    h.finish('a-1');
    await vi.waitFor(() => expect(closing).toBeDefined());
    await closing;
    await vi.waitFor(async () => expect(await statusOf(memory, 'a-1')).toBe('succeeded'));
    expect(h.started).toEqual(['a-1']);
    expect(await statusOf(memory, 'a-2')).toBe('queued');
  });

  it('writes an end that comes after close at once', async () => {
    const memory = createMemoryStorage().metadata;
    await memory.upsertAccount({ id: 'a', tier: 'free' });
    const h = harness(memory);
    await h.submit('a', 2);
    await h.scheduler.pass();
    await h.scheduler.close();
    h.finish('a-1');
    await vi.waitFor(async () => expect(await statusOf(memory, 'a-1')).toBe('succeeded'));
    expect(h.started).toEqual(['a-1']);
  });
});

describe('ending, over a store whose writes may overtake each other', () => {
  it('writes the end at once, holds the slot until the run settles, and claims one job at a time', async () => {
    const memory = createMemoryStorage().metadata;
    await memory.upsertAccount({ id: 'a', tier: 'pro' });
    const t = traced({ ...memory, serialWrites: false });
    const h = harness(t.store);
    await h.submit('a', 6);
    expect(await h.scheduler.pass()).toBe(5);
    expect(t.maxInFlight()).toBe(1);
    t.calls.length = 0;
    h.finish('a-1');
    await vi.waitFor(() => expect(h.started).toHaveLength(6));
    expect(h.runningAtEnd).toEqual([5]);
    expect(t.calls).toEqual(['end a-1', 'claim a', 'claimed a-6']);
    await h.scheduler.close();
  });
});

describe('ending, on SQLite', () => {
  it("commits a job's end and the claim of the next job together, once", async () => {
    const raw = new BetterSqlite3(join(dir, 'ending.db'));
    const seen = { commits: 0 };
    // Counts the statements after which no transaction is open: each is the end of one commit.
    const counted = (sql: string, statement: BetterSqlite3.Statement) =>
      new Proxy(statement, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (typeof value !== 'function') return value;
          if (prop !== 'run' && prop !== 'all') return value.bind(target);
          return (...args: unknown[]) => {
            const result = value.apply(target, args);
            if (!/^\s*select\b/i.test(sql) && !raw.inTransaction) seen.commits++;
            return result;
          };
        },
      });
    const database = new Proxy(raw, {
      get(target, prop) {
        if (prop === 'prepare') return (sql: string) => counted(sql, target.prepare(sql));
        const value = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const storage = await createSqliteStorage({
      filename: join(dir, 'ending.db'),
      database: database as unknown as SqliteDatabaseLike,
      blobs: createMemoryBlobStore(),
    });
    const store = storage.metadata;
    expect(store.serialWrites).toBe(true);
    const logger: Logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    // The tier from the options: looking it up in the store (upsertAccount) is a write of its own.
    const h = harness(store, { logger, tierOf: () => 'free' });
    await h.submit('a', 3);
    await h.scheduler.pass();
    expect(h.started).toEqual(['a-1']);
    const before = seen.commits;
    h.finish('a-1');
    await vi.waitFor(() => expect(h.started).toEqual(['a-1', 'a-2']));
    await vi.waitFor(async () => expect(await statusOf(store, 'a-1')).toBe('succeeded'));
    expect(seen.commits - before).toBe(1);
    expect(await statusOf(store, 'a-2')).toBe('running');
    expect(logger.error).not.toHaveBeenCalled();
    await h.scheduler.close();
    await storage.close();
  });
});
