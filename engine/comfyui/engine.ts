// The worker engine: runs jobs on a pool of engine servers that speak the
// reference's HTTP + WebSocket protocol. Node definitions are the workers'
// /object_info (cached, refreshed); validation applies the local engine's
// rules to them; each job runs on the least-loaded healthy worker. A node's
// files are committed as soon as the worker reports them, so a running job
// already lists them under their content-addressed names.
//
// A job whose worker is lost (unreachable too long, restarted, answering 5xx)
// runs again on another worker (onWorkerLost 'requeue', the default, at most
// maxRequeues times) or fails with WorkerLostError ('fail'). It is requeued
// also after some of its outputs were committed: the re-run produces them
// again, and an output file of the re-run whose node and bytes are those of
// an output already committed is that output (found by size, then hash, and
// committed under its first name, so the store keeps one), while the worker
// file names, which differ between workers (each counts its own), play no
// part. Files whose bytes differ (a node that is not deterministic) are new
// outputs next to the earlier ones. So the job ends with each output once,
// and what a user already fetched stays valid.
//
// Engines of several processes may share the workers (runners on one
// database): with `slots`, each claims a worker's slot in that shared
// registry before giving it a prompt (worker-slots.ts), and a job run again
// after its first process died or stopped goes first to the worker holding
// its prompt, to follow that prompt rather than start it over.

import type { HttpDispatcher } from '../../lib/http-dispatcher.ts';
import {
  type Engine,
  type EngineJob,
  EngineNotReadyError,
  type ExecutionContext,
  JobAbort,
  type NodeDefinition,
  type OutputAsset,
  type Workflow,
} from '../types.ts';
import { type DefinitionOf, validateWorkflow } from '../validate-workflow.ts';
import { createPool } from './pool.ts';
import { runJob } from './run-job.ts';
import { definitionsOf } from './validate.ts';
import { DEFAULT_TIMEOUTS } from './worker-client.ts';
import { WorkerLostError } from './worker-lost.ts';
import { createSharedSlots, type WorkerSlotRegistry } from './worker-slots.ts';

export type { WorkerSlotRegistry } from './worker-slots.ts';

export interface ComfyEngineOptions {
  /** Base URLs of the workers, e.g. http://gpu-1:8188. */
  workers: string[];
  /** Jobs run at once per worker (default 1: the reference runs one prompt at a time). */
  perWorker?: number;
  /** A job whose worker disappears: run it again on another worker, or fail it (default 'requeue'). */
  onWorkerLost?: 'requeue' | 'fail';
  /** How many times a job may be moved to another worker (default 2). */
  maxRequeues?: number;
  /** Bound on a job's time on a worker; none by default. */
  jobTimeoutMs?: number;
  /** A worker unreachable this long while running a job has lost it (default 15 s). */
  workerLostAfterMs?: number;
  /** Health check period of a healthy worker (default 5 s); failing ones back off up to backoffMaxMs. */
  healthIntervalMs?: number;
  /** Bound on a health check's /system_stats (default 3 s). */
  healthTimeoutMs?: number;
  /** Bound on /object_info, a large answer on servers with many custom nodes (default 30 s). */
  objectInfoTimeoutMs?: number;
  /** Bound on POST /prompt, which validates the workflow first (default 30 s). */
  submitTimeoutMs?: number;
  /** Bound on the small calls: /history and /queue cross-checks, cancel, interrupt (default 5 s). */
  requestTimeoutMs?: number;
  backoffMaxMs?: number;
  /** How often each worker's /object_info is fetched again (default 60 s). */
  definitionsRefreshMs?: number;
  /** While a job runs, how often its state is cross-checked through /history and /queue (default 5 s). */
  crossCheckMs?: number;
  /** How long a request that needs node definitions waits for a first worker before 429 deployment_not_ready (default 5 s). */
  definitionsWaitMs?: number;
  /** HTTP dispatcher (undici Agent) for worker calls; the global one by default. */
  dispatcher?: HttpDispatcher;
  /**
   * Slots claimed with the engines of other processes on the same workers
   * (storage's `metadata.workerSlots`), so a worker never gets more than
   * perWorker prompts from all of them; none: this engine's counts alone.
   */
  slots?: WorkerSlotRegistry;
  /** How long a claimed slot lasts unless renewed (renewed every quarter of it; default 60 s). Keep it above the job lease. */
  slotLeaseMs?: number;
  /** How often a job waiting for a shared slot asks again (default 250 ms). */
  slotRetryMs?: number;
  log?: (message: string, detail?: Record<string, unknown>) => void;
}

export function createComfyEngine(opts: ComfyEngineOptions): Engine {
  if (opts.workers.length === 0) throw new Error('createComfyEngine: at least one worker URL is needed');
  for (const url of opts.workers) {
    if (!/^https?:\/\/[^/]/.test(url)) throw new Error(`createComfyEngine: not an http(s) URL: ${url}`);
  }
  const clientId = crypto.randomUUID();
  const log = opts.log ?? (() => {});
  const perWorker = opts.perWorker ?? 1;
  const shared = opts.slots
    ? createSharedSlots({ registry: opts.slots, owner: clientId, capacity: perWorker, leaseMs: opts.slotLeaseMs ?? 60_000, log })
    : undefined;
  const pool = createPool({
    urls: opts.workers,
    perWorker,
    clientId,
    healthIntervalMs: opts.healthIntervalMs ?? 5000,
    healthTimeoutMs: opts.healthTimeoutMs ?? 3000,
    timeouts: {
      objectInfoMs: opts.objectInfoTimeoutMs ?? DEFAULT_TIMEOUTS.objectInfoMs,
      submitMs: opts.submitTimeoutMs ?? DEFAULT_TIMEOUTS.submitMs,
      requestMs: opts.requestTimeoutMs ?? DEFAULT_TIMEOUTS.requestMs,
    },
    backoffMaxMs: opts.backoffMaxMs ?? 30_000,
    definitionsRefreshMs: opts.definitionsRefreshMs ?? 60_000,
    dispatcher: opts.dispatcher,
    shared,
    slotRetryMs: opts.slotRetryMs,
    log,
  });

  // The union is built again only when some worker's definitions object was replaced (a refresh):
  // it is asked for several times per job, and a worker has hundreds of classes.
  type Union = { sources: Array<Record<string, NodeDefinition> | null>; defs: Record<string, NodeDefinition>; empty: boolean; lookup?: DefinitionOf };
  let union: Union | null = null;

  /** The union of the workers' classes; a job goes to a worker that has all of its own. */
  async function currentUnion(): Promise<Union> {
    await pool.whenDefinitions(opts.definitionsWaitMs ?? 5000);
    const sources = pool.workers.map((w) => w.defs);
    if (!union || sources.some((d, i) => d !== union!.sources[i])) {
      const defs: Record<string, NodeDefinition> = {};
      for (const d of sources) if (d) for (const k in d) if (Object.hasOwn(d, k)) defs[k] ??= d[k];
      union = { sources, defs, empty: Object.keys(defs).length === 0 };
    }
    if (union.empty) throw new EngineNotReadyError('No worker has answered yet, so the node classes are unknown. Try again shortly.');
    return union;
  }
  const nodeDefinitions = async () => (await currentUnion()).defs;

  async function execute(job: EngineJob, ctx: ExecutionContext): Promise<void> {
    const classes = [...new Set(Object.values(job.workflow as Workflow).map((n) => n?.class_type))];
    // What the job's runs committed so far: a re-run's file that is one of these is not committed twice.
    const committed = new Map<string, OutputAsset>();
    let avoid;
    // Run before, maybe by another process: the worker holding its prompt, if one still does, is asked first.
    const prefer = shared && (job.attempt ?? 1) > 1 ? await shared.holder(job.id) : null;
    for (let attempt = 0; ; attempt++) {
      const slot = await pool.acquire({ jobId: job.id, classTypes: classes, signal: ctx.signal, avoid, prefer: attempt === 0 ? prefer : null });
      const { worker } = slot;
      let canceled = false;
      try {
        await runJob(worker, job, ctx, {
          clientId,
          jobTimeoutMs: opts.jobTimeoutMs,
          workerLostAfterMs: opts.workerLostAfterMs ?? 15_000,
          crossCheckMs: opts.crossCheckMs ?? 5000,
          socketWaitMs: 2000,
          // Moved from a lost worker, or started again after a restart: the worker may hold the prompt already.
          resume: attempt > 0 || (job.attempt ?? 1) > 1,
          earlier: [...committed.values()],
          onCommitted: (asset) => void committed.set(asset.id, asset),
          onCancelSent: () => {
            canceled = true;
          },
        });
        return;
      } catch (err) {
        if (!(err instanceof WorkerLostError)) throw err;
        worker.suspect();
        const again = (opts.onWorkerLost ?? 'requeue') === 'requeue' && attempt < (opts.maxRequeues ?? 2) && !ctx.signal.aborted;
        if (!again) throw err;
        log('job moved to another worker', { job_id: job.id, worker: worker.url, error: err.message, outputs_committed: committed.size });
        ctx.emit({ type: 'notification', value: `The worker running this job was lost (${err.message}); it runs again on another worker.` });
        avoid = worker;
      } finally {
        // A canceled prompt keeps its worker (no new job) until the worker has let it go.
        if (canceled) slot.releaseWhenGone(job.id);
        // At a shutdown (or a lease lost to another runner) the prompt runs on: its next run takes over the shared slot.
        else if (ctx.signal.reason instanceof JobAbort && ctx.signal.reason.kind === 'shutdown') slot.leave();
        else slot.release();
      }
    }
  }

  return {
    name: 'comfyui',
    readiness: () => pool.readiness(),
    // busy counts this process's prompts there, a canceled one it has not let go of yet included (it holds its slot).
    servers: () => pool.workers.map((w) => ({ url: w.url, healthy: w.healthy, busy: w.running, slots: perWorker })),
    nodeDefinitions,
    validate: async (workflow) => {
      const current = await currentUnion();
      // Built at the first validation after each refresh: a worker has hundreds of classes.
      return validateWorkflow(workflow, (current.lookup ??= definitionsOf(current.defs)));
    },
    execute,
    async close() {
      pool.close();
      shared?.close();
    },
  };
}
