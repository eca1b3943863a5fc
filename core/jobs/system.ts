// The job machinery of one service instance: the engine, the scheduler that
// feeds it, the runner, the live-event hub and the stream cap, built from the
// service options. Handlers reach it as `ctx.jobs`.
import type { Engine } from '../../engine/types.ts';
import type { ServiceContext } from '../context.ts';
import type { ServiceOptions } from '../types.ts';
import { createJobHub, type JobHub } from './hub.ts';
import { recoverInterruptedJobs } from './recovery.ts';
import { createJobRunner, JobAbort } from './runner.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';
import { createStreamLimiter, type StreamLimiter } from './stream-limits.ts';

export interface JobSystem {
  engine: Engine;
  scheduler: Scheduler;
  hub: JobHub;
  streams: StreamLimiter;
  /** Per-job extra_data until the job ends; never stored. */
  extraData: Map<string, Record<string, unknown>>;
  /** Open event streams; each entry ends its stream (at shutdown). */
  sessions: Set<() => void>;
  runsJobs: boolean;
  retentionMs: number;
  maxWorkflowBytes: number;
  sseKeepaliveMs: number;
  /** Whether the job is running on this instance (its live events come through the hub). */
  runsHere(jobId: string): boolean;
  /** Aborts the job if it runs on this instance; false when it does not. */
  abortLocal(jobId: string): boolean;
  /** Recovers jobs a crash left running, then starts scheduling. */
  start(): Promise<void>;
  /** Stops starting jobs; jobs running here are aborted and queued again. */
  close(): Promise<void>;
}

export const DEFAULT_JOB_RETENTION_SECONDS = 7 * 24 * 3600;
export const DEFAULT_MAX_WORKFLOW_BYTES = 8 * 1024 * 1024;

export function createJobSystem(ctx: ServiceContext, options: ServiceOptions, engine: Engine): JobSystem {
  const hub = createJobHub((err) => ctx.logger.error('job event listener failed', { error: String(err) }));
  const active = new Map<string, AbortController>();
  const extraData = new Map<string, Record<string, unknown>>();
  const runsJobs = options.runJobs ?? true;
  const maxConcurrent = options.maxConcurrentJobs ?? 4;
  const runs = new Set<Promise<void>>();
  const stopping = new AbortController();
  const interruptedJobs = options.interruptedJobs ?? 'rerun';
  const sessions = new Set<() => void>();
  const runner = createJobRunner({
    ctx,
    engine,
    hub,
    active,
    extraData,
    progressIntervalMs: options.progressIntervalMs ?? 500,
    cancelPollMs: 1000,
    interruptedJobs,
    stopping: stopping.signal,
  });
  // Tiers come from the configuration, which only changes with a restart.
  const tiers = new Map<string, string>();
  const scheduler = createScheduler({
    store: ctx.metadata,
    tierOf: async (id) => {
      let tier = tiers.get(id);
      if (tier === undefined) tiers.set(id, (tier = (await ctx.metadata.upsertAccount({ id })).tier));
      return tier;
    },
    tierLimits: options.tierLimits,
    maxQueueDepth: options.maxQueueDepth,
    credits: options.credits,
    engineCapacity: () => (!runsJobs || engine.readiness().state !== 'ready' ? 0 : maxConcurrent - scheduler.running()),
    run(job) {
      const p = runner(job).finally(() => runs.delete(p));
      runs.add(p);
      return p;
    },
    // Picks up jobs queued by other instances (an API-only one, say) and engines that became ready.
    pollIntervalMs: runsJobs ? 1000 : 0,
    now: ctx.now,
    logger: ctx.logger,
  });

  return {
    engine,
    scheduler,
    hub,
    streams: createStreamLimiter(options.maxEventStreams ?? 16),
    extraData,
    sessions,
    runsJobs,
    retentionMs: (options.jobRetentionSeconds ?? DEFAULT_JOB_RETENTION_SECONDS) * 1000,
    maxWorkflowBytes: options.maxWorkflowBytes ?? DEFAULT_MAX_WORKFLOW_BYTES,
    sseKeepaliveMs: options.sseKeepaliveMs ?? 15_000,
    runsHere: (jobId) => active.has(jobId),
    abortLocal(jobId) {
      const controller = active.get(jobId);
      if (!controller) return false;
      if (!controller.signal.aborted) controller.abort(new JobAbort('cancel'));
      return true;
    },
    async start() {
      if (!runsJobs) return;
      await recoverInterruptedJobs(ctx, interruptedJobs);
      scheduler.kick();
    },
    async close() {
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
