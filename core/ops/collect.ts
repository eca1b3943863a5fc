// What /metrics and /ops/status show, gathered once per request by one
// function so the two never disagree: the storage's jobs by status and tier
// (one grouped read, which is also the storage check), the engine's
// readiness and servers (in memory), and this instance's live counts.
import type { EngineReadiness, EngineServerStatus } from '../../engine/types.ts';
import type { JobTierCount } from '../../storage/types.ts';
import type { ServiceContext } from '../context.ts';
import { JOB_STATUSES } from '../jobs/state-machine.ts';
import { checkEngine, checkStorage, type EngineCheck, type StorageCheck } from './checks.ts';

/** Expired jobs are left out: they pile up for good, and no one acts on their count. */
export const COUNTED_STATUSES = JOB_STATUSES.filter((s) => s !== 'expired');
/** A scrape waits longer than a probe: the grouped read may take a while on a large table, and Prometheus waits 10 s. */
const COLLECT_TIMEOUT_MS = 5000;

export interface QueueStatus {
  tier: string;
  queued: number;
  /** Running and canceling: both hold one of the tier's slots. */
  running: number;
  /** How long the oldest queued job has waited; null when none is queued. */
  oldest_queued_seconds: number | null;
}

export interface OpsSnapshot {
  ready: boolean;
  storage: StorageCheck;
  engine: { name: string; readiness: EngineReadiness; check: EngineCheck; servers: EngineServerStatus[] | undefined };
  /** Jobs by tier and status; empty when the storage did not answer. */
  jobs: JobTierCount[];
  /** The tiers that have jobs, by name. */
  queues: QueueStatus[];
  instance: { run_jobs: boolean; sse_streams: number; websockets: number; jobs_running: number };
}

function queuesOf(jobs: JobTierCount[], now: number): QueueStatus[] {
  const byTier = new Map<string, QueueStatus>();
  for (const row of jobs) {
    let q = byTier.get(row.tier);
    if (!q) byTier.set(row.tier, (q = { tier: row.tier, queued: 0, running: 0, oldest_queued_seconds: null }));
    if (row.status === 'queued') {
      q.queued += row.count;
      q.oldest_queued_seconds = Math.max(0, (now - row.oldest_created_at) / 1000);
    } else if (row.status === 'running' || row.status === 'canceling') q.running += row.count;
  }
  return [...byTier.values()].sort((a, b) => (a.tier < b.tier ? -1 : a.tier > b.tier ? 1 : 0));
}

export async function collectOps(ctx: ServiceContext): Promise<OpsSnapshot> {
  const servers = ctx.engine.servers?.();
  const check = checkEngine(ctx.engine, servers);
  let jobs: JobTierCount[] = [];
  const storage = await checkStorage(ctx, COLLECT_TIMEOUT_MS, async () => {
    jobs = await ctx.metadata.countJobsByTier([...COUNTED_STATUSES]);
  });
  return {
    ready: storage.ok && check.ok,
    storage,
    engine: { name: ctx.engine.name, readiness: ctx.engine.readiness(), check, servers },
    jobs,
    queues: queuesOf(jobs, ctx.now()),
    instance: {
      run_jobs: ctx.config.runJobs,
      sse_streams: ctx.jobs.sessions.size,
      websockets: ctx.metrics.websockets.get(),
      jobs_running: ctx.jobs.scheduler.running(),
    },
  };
}
