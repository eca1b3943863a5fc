// The job machinery of one service instance: the scheduler that feeds the
// engine, the runner, the live-event hub and the stream cap, built from the
// service's shared parts. Handlers reach it as `ctx.jobs`.
import { JobAbort } from '../../engine/types.ts';
import type { ServiceBase } from '../context.ts';
import { createBusHub } from './bus-hub.ts';
import { createJobHub, type JobHub } from './hub.ts';
import type { Progress } from './progress.ts';
import { recoverExpiredLeases, recoverInterruptedJobs } from './recovery.ts';
import { createJobRunner } from './runner.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';
import { createStreamLimiter, type StreamLimiter } from './stream-limits.ts';
import { createJobViewCache, type JobViewCache } from './view-cache.ts';

/** Finished jobs' views kept (view-cache.ts): a few thousand polls' worth, ~16 MB of text at most. */
const VIEW_CACHE = { entries: 4096, chars: 8_000_000 };

/** The bus channel on which instances say a job was queued: its runners then look for work. */
const QUEUE_CHANNEL = 'queue';

export interface JobSystem {
  scheduler: Scheduler;
  hub: JobHub;
  streams: StreamLimiter;
  /** Finished jobs' views as GET /api/v2/jobs/{id} sent them, checked against the job's stamp on every use. */
  views: JobViewCache;
  /** Per-job extra_data until the job ends; never stored. */
  extraData: Map<string, Record<string, unknown>>;
  /** Open event streams; each entry ends its stream (at shutdown). */
  sessions: Set<() => void>;
  /** Whether the job is running on this instance (its live events come through the hub). */
  runsHere(jobId: string): boolean;
  /** The latest progress a run on this instance published; its row may hold an older one (see runner.ts). */
  liveProgress(jobId: string): Progress | undefined;
  /** Aborts the job if it runs on this instance; false when it does not. */
  abortLocal(jobId: string): boolean;
  /**
   * A job was queued: this instance's scheduler looks now if it runs jobs,
   * and, through the storage's event bus, so do the runners elsewhere
   * (without a bus they find it at their next poll). `started`: the
   * scheduler claimed a job with the submission (Scheduler.enqueue), so this
   * instance need not look.
   */
  queued(started?: boolean): void;
  /** Recovers jobs a crash left running, then starts scheduling. */
  start(): Promise<void>;
  /** Stops starting jobs; jobs running here are aborted and queued again. */
  close(): Promise<void>;
}

export function createJobSystem(ctx: ServiceBase): JobSystem {
  const { config, engine } = ctx;
  const inProcess = createJobHub((err) => ctx.logger.error('job event listener failed', { error: String(err) }));
  // With a bus, the other instances on the storage hear this one's job events and it theirs.
  const hub = ctx.events ? createBusHub(inProcess, ctx.events, { logger: ctx.logger, progressIntervalMs: config.progressIntervalMs }) : inProcess;
  const active = new Map<string, AbortController>();
  const progress = new Map<string, Progress>();
  const extraData = new Map<string, Record<string, unknown>>();
  const runsJobs = config.runJobs;
  const maxConcurrent = config.maxConcurrentJobs;
  const runs = new Set<Promise<void>>();
  const stopping = new AbortController();
  const interruptedJobs = config.interruptedJobs;
  const sessions = new Set<() => void>();
  const runner = createJobRunner({
    ctx,
    engine,
    hub,
    active,
    progress,
    extraData,
    progressIntervalMs: config.progressIntervalMs,
    cancelPollMs: 1000,
    leaseMs: config.jobLeaseMs,
    interruptedJobs,
    stopping: stopping.signal,
  });
  // The owner of the leases this instance takes: one per process start.
  const owner = crypto.randomUUID();
  let reaper: ReturnType<typeof setInterval> | undefined;
  let stopHearingQueue: (() => void) | undefined;
  // Tiers come from the configuration, which only changes with a restart.
  const tiers = new Map<string, string>();
  const scheduler = createScheduler({
    store: ctx.metadata,
    owner,
    leaseMs: config.jobLeaseMs,
    tierOf: async (id) => {
      let tier = tiers.get(id);
      if (tier === undefined) tiers.set(id, (tier = (await ctx.metadata.upsertAccount({ id })).tier));
      return tier;
    },
    tierLimits: config.tierLimits,
    maxQueueDepth: config.maxQueueDepth,
    maxQueuedPerAccount: config.maxQueuedPerAccount,
    credits: ctx.credits,
    // A stopped deployment starts nothing: its queued jobs wait for the operator to start it again.
    engineCapacity: () => (!runsJobs || ctx.deployment.stopped() || engine.readiness().state !== 'ready' ? 0 : maxConcurrent - scheduler.running()),
    run(job, ending, workflow) {
      const p = runner(job, ending, workflow).finally(() => runs.delete(p));
      runs.add(p);
      return p;
    },
    // Picks up jobs queued by other instances (an API-only one, say) and engines that became ready.
    pollIntervalMs: runsJobs ? 1000 : 0,
    now: ctx.now,
    logger: ctx.logger,
  });

  return {
    scheduler,
    hub,
    streams: createStreamLimiter(config.maxEventStreams),
    views: createJobViewCache(VIEW_CACHE),
    extraData,
    sessions,
    runsHere: (jobId) => active.has(jobId),
    liveProgress: (jobId) => progress.get(jobId),
    abortLocal(jobId) {
      const controller = active.get(jobId);
      if (!controller) return false;
      if (!controller.signal.aborted) controller.abort(new JobAbort('cancel'));
      return true;
    },
    queued(started = false) {
      if (runsJobs && !started) scheduler.kick();
      ctx.events
        ?.publish(QUEUE_CHANNEL, '')
        .catch((err: unknown) => ctx.logger.warn('could not tell the runners of a queued job', { error: String(err) }));
    },
    async start() {
      if (!runsJobs) return;
      ctx.deployment.onStarted(() => scheduler.kick());
      // A job queued on another instance: look now rather than at the next poll (and again after a gap in hearing).
      stopHearingQueue = ctx.events?.subscribe(
        QUEUE_CHANNEL,
        () => scheduler.kick(),
        () => scheduler.kick(),
      );
      if (ctx.metadata.claimRunner) {
        // The storage's only runner: every job left running is a crash's leftover (claimed first, so
        // that a second runner cannot take the first one's running jobs for leftovers).
        await ctx.metadata.claimRunner();
        await recoverInterruptedJobs(ctx, interruptedJobs);
      } else {
        // Runners share the storage: only jobs whose lease ran out are taken back, now and then by
        // whichever runner looks first.
        const reap = () =>
          recoverExpiredLeases(ctx, interruptedJobs)
            .then((n) => n > 0 && scheduler.kick())
            .catch((err: unknown) => ctx.logger.error('taking back expired job leases failed', { error: String(err) }));
        await reap();
        reaper = setInterval(reap, Math.max(1000, Math.floor(config.jobLeaseMs / 2)));
        (reaper as { unref?: () => void }).unref?.();
      }
      scheduler.kick();
    },
    async close() {
      if (reaper !== undefined) clearInterval(reaper);
      stopHearingQueue?.();
      await scheduler.close();
      for (const end of [...sessions]) end();
      for (const controller of active.values()) if (!controller.signal.aborted) controller.abort(new JobAbort('shutdown'));
      // Runs get a moment to write their end; a write that keeps failing is given up after that.
      const settled = Promise.all([...runs]);
      const timer = setTimeout(() => stopping.abort(), 5000);
      await settled;
      clearTimeout(timer);
      stopping.abort();
      await engine.close();
    },
  };
}
