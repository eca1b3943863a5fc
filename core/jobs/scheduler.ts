// The scheduler: moves queued jobs to running when the account's tier and the
// engine both have room, and hands them to `run`.
//
// Policy (one pass):
// - Eligible accounts are those with queued jobs and fewer running jobs than
//   their tier's limit. Among them the least recently served account goes
//   first (an account no runner ever started a job for counts as served
//   longest ago); ties go to the account whose oldest queued job has the
//   lowest `seq`. After each start the account
//   goes to the back of that order, so accounts take turns: ten jobs from A
//   cannot keep B's one job waiting for more than one free engine slot.
// - Within an account jobs start in the store's pick order: higher `priority`
//   first, `seq` order (FIFO) within a priority. Priority orders one account's
//   line only; it never lets an account jump the turns.
// - A start is the store's claimJob: as one step for every runner sharing
//   the store, it checks the account's running and canceling jobs against
//   its tier limit and moves its next queued job to running under a lease
//   (JobStore.claimJob). So the tier limit holds across runners, and each
//   job starts once. The runner renews the lease while the job runs.
//
// Batches: over a store whose writes run in call order (JobStore.serialWrites:
// SQLite, memory) a pass plans the starts of all its free slots in turn order
// and claims them at once, and a run gives its slot back as its job leaves the
// engine (`ending`): its end is written just ahead of the claims that fill the
// slot, so their counts see it. On SQLite those writes then share one commit
// where each had its own (bench:jobs part 1). When the last pass found nothing
// queued (and nothing may have been queued since), there are no such claims:
// the end is written at once instead of waiting for the next pass to begin,
// which would only delay the job's end, and no pass follows it (it would find
// the queue as empty). A claim that comes back empty
// drops its account for the pass and does not count as a turn served. Over a
// pool (PostgreSQL) writes may overtake each other: a pass claims one job at a
// time and a slot is held until the run settles.
//
// Starting at submission: over a store whose writes run in call order, a
// submission whose account is under its limits here, with room in the engine,
// has a claim of the account's next job issued right behind its insert, under
// the condition that no other account has queued jobs (JobClaim.alone): the
// claim a pass would make when that account's line is the only one. The store
// checks that and the tier limit in the claim's own step; SQLite commits the
// insert and the claim as one, and no pass runs for the job. The claimed job
// is handed to `run` once the submission has announced its job as queued
// (`start`), right then, so that a claimed job never waits unrun.
// While such a claim is under way it holds one engine slot, which passes
// leave alone, and no other submission starts one.
//
// Counting: besides the store's count, this instance's own count of jobs it
// started bounds an account (a job whose row already left `running` still
// holds its slot here until its run gives it back through `ending`, or settles).
//
// Turns hold across runners: the store keeps when each account last had a
// job claimed (by any runner), and the least recently served account goes
// first; this instance's own order only breaks ties within a clock tick.
// Runners' clocks are assumed to agree to within a claim or two.
//
// Queue depth: `enqueue` checks it, its insert counting the queue in the
// same step for every instance (JobStore.createJob's bounds), so submissions
// racing on several instances never overshoot the bounds; the same count
// says how many jobs the new one has ahead of it.

import type { AccountStore, ClaimedJob, JobStore, JobSummary, NewJob, QueueBounds } from '../../storage/types.ts';
import { errorText, silentLogger } from '../log.ts';
import type { Logger } from '../types.ts';
import { type CreditsProvider, checkCredits } from './credits.ts';
import { queueFullError } from './queue-full.ts';
import { createTierLimits, FALLBACK_TIER } from './tiers.ts';

const QUEUED = 'queued';
/** How many accounts the instance remembers for turn-taking (least recent forgotten first). */
const SERVED_MEMORY = 100_000;

/**
 * Runs `task` after the current work and the I/O it queued (the answer that
 * admitted a job goes out first), without the minimum delay of a 0 ms timer
 * (1 ms on Node and Bun, more under load), which each job would wait.
 */
const soon: (task: () => void) => void =
  (globalThis as { setImmediate?: (task: () => void) => unknown }).setImmediate ?? ((task) => void setTimeout(task, 0));

export interface SchedulerOptions {
  /** Jobs; with `upsertAccount` it also gives an account's tier (read, never changed). */
  store: JobStore & Partial<Pick<AccountStore, 'upsertAccount'>>;
  /** This runner's id, unique per process: the owner of the leases it takes. Default a random UUID. */
  owner?: string;
  /** How long a claimed job's lease lasts unless the run renews it, ms. Default 30000. */
  leaseMs?: number;
  /** The account's tier; overrides the store. Without either, every account is `defaultTier`. */
  tierOf?: (accountId: string) => string | Promise<string>;
  /** Merged over DEFAULT_TIER_LIMITS (free 1, standard 1, creator 3, pro 5). */
  tierLimits?: Record<string, number>;
  /** Tier whose limit unknown tiers (e.g. the stores' 'default') get. Default 'free'. */
  defaultTier?: string;
  /** Queued jobs in all accounts before `admit` answers 429 `queue_full`. Default 10000. */
  maxQueueDepth?: number;
  /** Queued jobs of one account before `admit` answers 429 `queue_full`. Default Infinity. */
  maxQueuedPerAccount?: number;
  /** `Retry-After` of a `queue_full` answer, seconds. Default 10. */
  retryAfterSeconds?: number;
  /** How many more jobs the engine takes now, counting jobs already handed to `run`. Default Infinity. */
  engineCapacity?: () => number;
  /**
   * Executes a job the scheduler has moved to running (its row, and its
   * workflow as the claim read it), and settles once the job has left the
   * engine. Moving the row to its terminal status is its job, through
   * `ending`; a rejection is logged and the slot freed.
   */
  run: (job: JobSummary, ending: Ending, workflow: Record<string, unknown>) => Promise<void>;
  /** Checked by `admit`; none means credits are unlimited. */
  credits?: CreditsProvider;
  /** Runs a pass this often even without kicks, to pick up jobs other instances queued. 0 = never (default). */
  pollIntervalMs?: number;
  now?: () => number;
  logger?: Logger;
}

/**
 * Given to `run` with each job: the run calls it once, with its end's write,
 * when the job has left the engine. Over a store that writes in call order
 * (JobStore.serialWrites) the job's slot is free from then on, and `write`
 * starts just ahead of the next claims (or at the end of the pass), so a
 * store that commits writes queued together (SQLite) commits them as one;
 * at once when nothing was queued when last looked.
 * Otherwise, and once the scheduler is closed, `write` starts at once and
 * the slot is held until the run settles. `write` resolves to what it
 * wrote when it moved the row out of `running` (its slot in the store's
 * count is free), to a falsy value when it did not.
 */
export type Ending = <T>(write: () => Promise<T>) => Promise<T>;

export interface Scheduler {
  /** Throws 402 `insufficient_credits` when the account may not queue a job now. */
  admit(accountId: string): Promise<void>;
  /**
   * Stores the job if the queue's bounds allow it, counted as one step with
   * the insert, and resolves to its row and how many jobs (of all accounts)
   * were queued ahead of it then; throws 429 `queue_full` (with
   * Retry-After) otherwise. `started`: the job was claimed with its insert
   * (see the top of this file) and goes to `run` soon; no pass is needed for
   * it. (The claim may start an older queued job of the account instead; the
   * new one then waits for a pass, as any queued job does.) `start` hands
   * the claimed job to `run`: the caller calls it once it has told of the
   * new job as queued, so that its running comes after; a claim that is
   * still not handed over after the current turn of the event loop is
   * handed over then. A no-op when nothing was claimed.
   */
  enqueue(job: NewJob): Promise<{ job: JobSummary; ahead: number; started: boolean; start(): void }>;
  /** Asks for a pass soon; kicks before that pass begins share it. */
  kick(): void;
  /** One pass now (after any pass under way); resolves to the number of jobs started. */
  pass(): Promise<number>;
  /** Jobs this instance started whose `run` has not settled, for one account or all. */
  running(accountId?: string): number;
  /** Starts no job after it resolves; jobs under way keep running and are not awaited. */
  close(): Promise<void>;
}

/** One account's line within a pass. */
interface Lane {
  accountId: string;
  /** When any runner last started a job of the account (the store's claim time; 0: never): whose turn it is. */
  lastClaimed: number;
  /** Its oldest queued job's seq, then that of the job it started last: only breaks ties between lanes. */
  headSeq: number;
  /** The tier's limit; undefined until looked up. */
  limit?: number;
  /** Its queued jobs not yet claimed in this pass, as the listing counted them. */
  queued: number;
}

export function createScheduler(opts: SchedulerOptions): Scheduler {
  const { store, run } = opts;
  const logger = opts.logger ?? silentLogger;
  const now = opts.now ?? Date.now;
  const engineCapacity = opts.engineCapacity ?? (() => Infinity);
  const owner = opts.owner ?? crypto.randomUUID();
  const leaseMs = opts.leaseMs ?? 30_000;
  const maxQueueDepth = opts.maxQueueDepth ?? 10_000;
  const maxQueuedPerAccount = opts.maxQueuedPerAccount ?? Number.POSITIVE_INFINITY;
  const retryAfter = String(Math.max(1, Math.ceil(opts.retryAfterSeconds ?? 10)));
  const limits = createTierLimits(opts.tierLimits, opts.defaultTier ?? FALLBACK_TIER);
  const fallbackTier = opts.defaultTier ?? FALLBACK_TIER;
  const tierOf = opts.tierOf ?? (store.upsertAccount ? async (id: string) => (await store.upsertAccount!({ id })).tier : () => fallbackTier);
  const bounds: QueueBounds = {
    maxQueued: maxQueueDepth,
    ...(Number.isFinite(maxQueuedPerAccount) && { maxQueuedPerAccount }),
  };
  // Bounded by maxQueueDepth: no more accounts can have queued jobs than there are queued jobs.
  const accountScan = Math.max(maxQueueDepth, 1_000);

  const runningJobs = new Map<string, string>(); // job id -> account id
  const runningByAccount = new Map<string, number>();
  const lastServed = new Map<string, number>(); // insertion order = least recently served first
  let turn = 0;
  let closed = false;
  let chain: Promise<unknown> = Promise.resolve();
  let kickPending = false;
  /** Claims that came back empty or failed, and passes that failed: a run that ended early checks it when it settles (see launch). */
  let misses = 0;
  /**
   * The last pass found no queued job, and every submission since started its
   * own (see enqueue); anything that may have queued one (a submission that
   * did not, a kick from outside: another instance, the poll, a sweep) clears
   * it. While it holds, an end's write has no claims to share a commit with,
   * so it is written at once rather than at the next pass.
   */
  let queueEmpty = false;
  /** A submission's claim (see enqueue) from its issue until its job is handed to `run`: it holds an engine slot meanwhile. */
  let starting: Promise<void> | null = null;
  const capacity = () => engineCapacity() - (starting === null ? 0 : 1);
  const poll = opts.pollIntervalMs ? setInterval(() => lookAgain(), opts.pollIntervalMs) : undefined;

  const localRunning = (accountId: string) => runningByAccount.get(accountId) ?? 0;

  function served(accountId: string) {
    lastServed.delete(accountId);
    lastServed.set(accountId, ++turn);
    if (lastServed.size > SERVED_MEMORY) lastServed.delete(lastServed.keys().next().value!);
  }

  // Batches (see the top of this file): only where writes run in call order.
  const together = store.serialWrites === true;
  /** Ends' writes waiting for the next claims (or the pass's end) to go just ahead of them. */
  const ends: Array<() => void> = [];
  function flushEnds() {
    for (const start of ends.splice(0)) start();
  }

  /** Gives the job's slot back; false when it already was. */
  function free(job: JobSummary): boolean {
    if (!runningJobs.delete(job.id)) return false;
    const n = localRunning(job.account_id) - 1;
    if (n > 0) runningByAccount.set(job.account_id, n);
    else runningByAccount.delete(job.account_id);
    return true;
  }

  function launch(claimed: ClaimedJob) {
    const { workflow, ...job } = claimed;
    runningJobs.set(job.id, job.account_id);
    runningByAccount.set(job.account_id, localRunning(job.account_id) + 1);
    /** `misses` when the end's write started, if it moved the row: the claims behind it had the slot. */
    let offered: number | undefined;
    const ending: Ending = (write) => {
      if (!together || closed || !free(job)) return write();
      return new Promise((resolve, reject) => {
        // Started by flushEnds itself, not a microtask later: it must join the store's queue
        // before the claims issued right after.
        const start = () => {
          const mark = misses;
          try {
            write().then((moved) => {
              if (moved) offered = mark;
              resolve(moved);
            }, reject);
          } catch (err) {
            reject(err);
          }
        };
        // Nothing was queued when last looked (and nothing may have been queued since): there is
        // no claim to go behind and nothing for the slot to go to, so the end is written at once
        // and kicks no pass. An end through here is terminal; a run put back in the queue (at
        // shutdown) is written after close, straight.
        if (queueEmpty) return start();
        ends.push(start);
        kick();
      });
    };
    let done: Promise<void>;
    try {
      done = Promise.resolve(run(job, ending, workflow));
    } catch (err) {
      done = Promise.reject(err);
    }
    done
      .catch((err: unknown) => {
        logger.error('job run failed', {
          job_id: job.id,
          account_id: job.account_id,
          error: errorText(err),
        });
      })
      .finally(() => {
        // A slot given back now, or early by an end that failed or found the row moved (a claim
        // behind it may have come back empty while the row still counted), goes to another pass.
        // After an end that moved the row, the claims behind it saw the slot free: another pass
        // is due only if one of them missed (came back empty or failed) since; a job queued
        // since kicks a pass of its own. Most jobs end that way, and so spare a pass each.
        if (free(job) || offered === undefined) return kick();
        const mark = offered;
        void chain.then(() => {
          if (misses !== mark) kick();
        });
      });
  }

  /**
   * The lane whose turn it is: the account any runner served least recently
   * (the store's claim times), then the one this instance served least
   * recently (claims within one clock tick), then the oldest head job.
   */
  function next(lanes: Lane[]): Lane {
    let best = lanes[0];
    for (const lane of lanes) {
      const a = lastServed.get(lane.accountId) ?? 0;
      const b = lastServed.get(best.accountId) ?? 0;
      const earlier = lane.lastClaimed !== best.lastClaimed ? lane.lastClaimed < best.lastClaimed : a !== b ? a < b : lane.headSeq < best.headSeq;
      if (earlier) best = lane;
    }
    return best;
  }

  async function runPass(): Promise<number> {
    try {
      return await claimAll();
    } catch (err) {
      misses++;
      throw err;
    } finally {
      flushEnds();
    }
  }

  async function claimAll(): Promise<number> {
    if (closed) return 0;
    // The engine may not count a job until its run has begun, so this pass
    // also spends from what the engine offered at its start.
    let budget = capacity();
    if (!(budget > 0)) return 0;
    const lanes = await queuedLanes();
    queueEmpty = lanes.length === 0;
    const drop = (lane: Lane) => {
      const i = lanes.indexOf(lane);
      if (i >= 0) lanes.splice(i, 1);
    };
    let started = 0;
    while (!closed && lanes.length > 0) {
      const room = Math.min(budget, capacity());
      if (!(room > 0)) break;
      /** The planned accounts' turns before planning: only the claims that succeed count as served. */
      const turns = new Map<string, number | undefined>();
      let plan: Lane[];
      let results: PromiseSettledResult<ClaimedJob | null>[];
      try {
        plan = await planStarts(lanes, together ? room : 1, turns, drop);
        if (plan.length === 0) break;
        // Queued ahead of the claims: their counts see them.
        flushEnds();
        const claimedAt = now();
        // All issued before any is answered, in plan order (a store that throws instead of rejecting included).
        results = await Promise.allSettled(
          plan.map(async (lane) => store.claimJob({ account_id: lane.accountId, limit: lane.limit!, owner, now: claimedAt, lease_ms: leaseMs })),
        );
      } finally {
        for (const [accountId, turn] of turns) {
          if (turn === undefined) lastServed.delete(accountId);
          else lastServed.set(accountId, turn);
        }
      }
      let failure: PromiseRejectedResult | undefined;
      results.forEach((result, i) => {
        const lane = plan[i];
        const job = result.status === 'fulfilled' ? result.value : null;
        if (!job) {
          misses++;
          drop(lane); // at its limit across runners, or nothing left queued
          if (result.status === 'rejected') failure ??= result;
          return;
        }
        lane.headSeq = job.seq;
        if (--lane.queued <= 0) drop(lane);
        budget--;
        started++;
        served(lane.accountId);
        launch(job);
      });
      // The jobs claimed beside a failed claim run; the failure then ends the pass.
      if (failure) throw failure.reason;
    }
    return started;
  }

  /** The accounts with queued jobs; their turns (the store's listing) only when there are two or more. */
  async function queuedLanes(): Promise<Lane[]> {
    if (store.peekQueuedAccounts) {
      const few = await store.peekQueuedAccounts(2);
      // Claim times and oldest jobs only order lanes: a lone one needs neither.
      if (few.length < 2) return few.map((a) => ({ accountId: a.account_id, lastClaimed: 0, headSeq: 0, queued: a.queued }));
    }
    return (await store.listAccountsWithQueuedJobs(accountScan)).map((a) => ({
      accountId: a.account_id,
      lastClaimed: a.last_claimed_at,
      headSeq: a.oldest_seq,
      queued: a.queued,
    }));
  }

  /**
   * Up to `size` starts in turn order as if every claim succeeds: each puts
   * its account at the back (`served`, its turn before kept in `turns`), and
   * an account gets no more than its tier's free slots or its queued jobs.
   */
  async function planStarts(lanes: Lane[], size: number, turns: Map<string, number | undefined>, drop: (lane: Lane) => void): Promise<Lane[]> {
    const plan: Lane[] = [];
    const planned = new Map<Lane, number>();
    const open = [...lanes];
    const at = now();
    while (plan.length < size && open.length > 0) {
      const lane = next(open);
      lane.limit ??= limits.limitOf(await tierOf(lane.accountId));
      const taken = planned.get(lane) ?? 0;
      if (taken >= Math.min(lane.limit - localRunning(lane.accountId), lane.queued)) {
        open.splice(open.indexOf(lane), 1);
        if (taken === 0) drop(lane);
        continue;
      }
      planned.set(lane, taken + 1);
      plan.push(lane);
      if (!turns.has(lane.accountId)) turns.set(lane.accountId, lastServed.get(lane.accountId));
      lane.lastClaimed = at;
      served(lane.accountId);
    }
    return plan;
  }

  /**
   * The claim a submission issues right behind its insert (see the top of
   * this file), called in the same turn as the insert so that it runs after
   * it. It holds an engine slot (`starting`) until `start` hands what it
   * claimed to `run`, or until the current turn of the event loop is over.
   */
  async function claimBehind(accountId: string, limit: number): Promise<{ claimed: ClaimedJob | null; start(): void }> {
    let release!: () => void;
    starting = new Promise((resolve) => (release = resolve));
    const claim = { account_id: accountId, limit, owner, now: now(), lease_ms: leaseMs, alone: true };
    const claimed = await store.claimJob(claim).catch((err: unknown) => {
      logger.error('claim at submission failed', { account_id: accountId, error: errorText(err) });
      return null;
    });
    let handed = false;
    const start = () => {
      if (handed) return;
      handed = true;
      starting = null;
      release();
      if (claimed === null) return;
      served(claimed.account_id);
      launch(claimed);
    };
    // A caller that never calls `start` still has its claim run.
    soon(start);
    return { claimed, start };
  }

  /** The account's tier limit for a claim at submission; 0 (no claim) when its tier cannot be had now. */
  async function startLimit(accountId: string): Promise<number> {
    try {
      return limits.limitOf(await tierOf(accountId));
    } catch {
      return 0; // a pass looks it up again, and reports what fails
    }
  }

  function pass(): Promise<number> {
    const p = chain.then(runPass);
    chain = p.catch(() => undefined);
    return p;
  }

  /** A kick from outside: jobs may have been queued that no pass has seen. */
  function lookAgain() {
    queueEmpty = false;
    kick();
  }

  function kick() {
    if (closed || kickPending) return;
    kickPending = true;
    soon(() => {
      kickPending = false;
      if (closed) return;
      pass().catch((err: unknown) => {
        logger.error('scheduler pass failed', { error: errorText(err) });
      });
    });
  }

  return {
    async admit(accountId) {
      await checkCredits(opts.credits, accountId);
    },
    async enqueue(job) {
      const limit = together && job.status === QUEUED && starting === null && !closed && capacity() > 0 ? await startLimit(job.account_id) : 0;
      // Checked again after the tier's lookup: another submission may have begun its claim meanwhile.
      const claiming = limit > localRunning(job.account_id) && starting === null && !closed && capacity() > 0;
      if (claiming) flushEnds(); // ends first: the claim's count sees the slots they free
      // One account cannot fill the queue for everyone: past its own bound it waits for its jobs to start.
      const creating = store.createJob(job, bounds);
      creating.catch(() => {}); // awaited below, after the claim
      const behind = claiming ? claimBehind(job.account_id, limit) : null;
      const { claimed, start } = behind === null ? { claimed: null, start: () => {} } : await behind;
      let created: Awaited<typeof creating>;
      try {
        created = await creating;
      } catch (err) {
        start(); // no new job to announce: what the claim took (an older job) runs now
        throw err;
      }
      if ('refused' in created) {
        start();
        if (created.refused === 'queue') logger.warn('queue full', { account_id: job.account_id, queued: created.queued });
        throw queueFullError(created, retryAfter);
      }
      const { queued_before, ...row } = created;
      const started = claimed?.id === job.id;
      if (!started) queueEmpty = false;
      // Every store counts under `maxQueued`, which is always set here; a store that did not is asked.
      return { job: row, ahead: queued_before ?? (await store.countJobs([QUEUED])), started, start };
    },
    kick: lookAgain,
    pass,
    running(accountId) {
      return accountId === undefined ? runningJobs.size : localRunning(accountId);
    },
    async close() {
      closed = true;
      flushEnds();
      if (poll !== undefined) clearInterval(poll);
      await chain;
      await starting;
    },
  };
}
