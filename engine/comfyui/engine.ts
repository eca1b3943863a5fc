// The worker engine: runs jobs on a pool of engine servers that speak the
// reference's HTTP + WebSocket protocol. Node definitions are the workers'
// /object_info (cached, refreshed); validation applies the local engine's
// rules to them; each job runs on a free healthy worker that has its node
// classes: one holding its models first (model affinity), else the least
// loaded (pool.ts, slot-acquire.ts, affinity.ts). A node's
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
//
// Workers come and go at run time (addServer, drainServer, removeServer).
// Removing one is immediate: a job running there is lost, as when a worker
// dies, and runs again elsewhere per onWorkerLost (its prompt there is sent a
// cancel); an operator who wants its jobs to finish drains it first, then
// removes it once the drain settled. Removal does not wait for the drain
// itself so that it also works on a server that hangs.
//
// Model affinity: a worker is taken to hold the models its prompts (and its
// warm-up) loaded, as named by their loader inputs (model-loaders.ts), the
// last modelsPerServer of them, until it goes away (a restart) or is sent
// /free (freeServer).

import { anySignal } from '../../lib/any-signal.ts';
import {
  type Engine,
  type EngineJob,
  EngineNotReadyError,
  type EngineServerStatus,
  type ExecutionContext,
  JobAbort,
  type OutputAsset,
  type Workflow,
} from '../types.ts';
import { validateWorkflow } from '../validate-workflow.ts';
import { type Union, unionOf } from './definitions-union.ts';
import type { ComfyEngineOptions } from './engine-options.ts';
import { freeWorker } from './free-worker.ts';
import { modelsOf } from './model-loaders.ts';
import { createPool, type PoolWorker } from './pool.ts';
import { runJob } from './run-job.ts';
import { definitionsOf } from './validate.ts';
import { warmUp } from './warmup.ts';
import { DEFAULT_TIMEOUTS } from './worker-client.ts';
import { WorkerLostError } from './worker-lost.ts';
import { createSharedSlots } from './worker-slots.ts';

export type { ComfyEngineOptions } from './engine-options.ts';
export type { WorkerSlotRegistry } from './worker-slots.ts';

/** One engine server as the worker engine sees it (servers()). */
export interface ComfyServerStatus extends EngineServerStatus {
  state: 'active' | 'draining';
  /** Running its warm-up: takes no job yet. */
  warming: boolean;
  /** The model files it is taken to hold, least recently used first. */
  models: string[];
}

export interface ComfyEngine extends Engine {
  /** Joins an engine server (an http(s) base URL; throws on another); a known one is kept, a draining one takes jobs again. */
  addServer(url: string): void;
  /** The server takes no new job; settles once none of ours runs there (at once for an unknown URL). */
  drainServer(url: string): Promise<void>;
  /** The server leaves now; a job running there runs again elsewhere (onWorkerLost). Settles once those jobs let go of it. */
  removeServer(url: string): Promise<void>;
  /** Sends the server /free (unload its models, free its memory) and forgets what it held. */
  freeServer(url: string): Promise<void>;
  servers(): ComfyServerStatus[];
}

function checkUrl(url: string): void {
  if (!/^https?:\/\/[^/]/.test(url)) throw new Error(`createComfyEngine: not an http(s) URL: ${url}`);
}

export function createComfyEngine(opts: ComfyEngineOptions): ComfyEngine {
  for (const url of opts.workers) checkUrl(url);
  const clientId = crypto.randomUUID();
  const log = opts.log ?? (() => {});
  const perWorker = opts.perWorker ?? 1;
  const shared = opts.slots
    ? createSharedSlots({ registry: opts.slots, owner: clientId, capacity: perWorker, leaseMs: opts.slotLeaseMs ?? 60_000, log })
    : undefined;
  const { warmup } = opts;
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
    affinityWaitMs: (opts.routing ?? 'affinity') === 'affinity' ? Math.max(0, opts.affinityWaitMs ?? 5000) : null,
    modelsPerServer: opts.modelsPerServer ?? 8,
    warmUp: warmup
      ? async (worker) => {
          await warmUp(worker, warmup, { clientId, pollMs: opts.crossCheckMs ?? 5000, timeoutMs: opts.warmupTimeoutMs ?? 600_000 });
          worker.models.use(modelsOf(warmup, worker.defs));
          log('worker warmed up', { worker: worker.url, models: worker.models.list() });
        }
      : undefined,
    log,
  });

  let union: Union | null = null;
  async function currentUnion(): Promise<Union> {
    await pool.whenDefinitions(opts.definitionsWaitMs ?? 5000);
    union = unionOf(pool.workers, union);
    if (union.empty) throw new EngineNotReadyError('No worker has answered yet, so the node classes are unknown. Try again shortly.');
    return union;
  }
  const nodeDefinitions = async () => (await currentUnion()).defs;

  /** The job's context, its signal also aborted when its worker leaves the pool, until `release()`. */
  function onWorker(ctx: ExecutionContext, worker: PoolWorker): ExecutionContext & { release(): void } {
    const { signal, release } = anySignal([ctx.signal, worker.gone]);
    return {
      signal,
      partner: ctx.partner,
      emit: (event) => ctx.emit(event),
      commitOutput: (output) => ctx.commitOutput(output),
      readAsset: (ref) => ctx.readAsset(ref),
      release,
    };
  }

  async function execute(job: EngineJob, ctx: ExecutionContext): Promise<void> {
    const workflow = job.workflow as Workflow;
    const classes = [...new Set(Object.values(workflow).map((n) => n?.class_type))];
    const models = modelsOf(workflow, union?.defs);
    // What the job's runs committed so far: a re-run's file that is one of these is not committed twice.
    const committed = new Map<string, OutputAsset>();
    let avoid;
    // Run before, maybe by another process: the worker holding its prompt, if one still does, is asked first.
    const prefer = shared && (job.attempt ?? 1) > 1 ? await shared.holder(job.id) : null;
    for (let attempt = 0; ; attempt++) {
      const slot = await pool.acquire({
        jobId: job.id,
        classTypes: classes,
        models,
        signal: ctx.signal,
        avoid,
        prefer: attempt === 0 ? prefer : null,
      });
      const { worker } = slot;
      // Counted as held from now: the jobs behind this one that need its models wait for this worker, not load them elsewhere.
      worker.models.use(models);
      let canceled = false;
      const context = onWorker(ctx, worker);
      try {
        await runJob(worker, job, context, {
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
      } catch (caught) {
        // Removed from the pool under the job: whatever that cut short, the worker is lost to it.
        const err =
          worker.gone.aborted && !ctx.signal.aborted
            ? new WorkerLostError(`The worker ${worker.url} was removed from the pool.`, worker.url)
            : caught;
        if (!(err instanceof WorkerLostError)) throw err;
        worker.suspect();
        const again = (opts.onWorkerLost ?? 'requeue') === 'requeue' && attempt < (opts.maxRequeues ?? 2) && !ctx.signal.aborted;
        if (!again) throw err;
        log('job moved to another worker', { job_id: job.id, worker: worker.url, error: err.message, outputs_committed: committed.size });
        ctx.emit({ type: 'notification', value: `The worker running this job was lost (${err.message}); it runs again on another worker.` });
        avoid = worker;
      } finally {
        context.release();
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
    servers: () =>
      pool.workers.map((w) => ({
        url: w.url,
        healthy: w.healthy,
        busy: w.running,
        slots: perWorker,
        state: w.state,
        warming: w.warming,
        models: w.models.list(),
      })),
    nodeDefinitions,
    validate: async (workflow) => {
      const current = await currentUnion();
      // Built at the first validation after each change: a worker has hundreds of classes.
      return validateWorkflow(workflow, (current.lookup ??= definitionsOf(current.defs)));
    },
    execute,
    addServer(url) {
      checkUrl(url);
      pool.add(url);
    },
    drainServer: (url) => pool.drain(url),
    removeServer: async (url) => {
      await pool.remove(url);
    },
    async freeServer(url) {
      const w = pool.workers.find((x) => x.url === url.replace(/\/+$/, ''));
      if (!w) return;
      await freeWorker(w.url, opts.dispatcher, opts.requestTimeoutMs ?? DEFAULT_TIMEOUTS.requestMs);
      w.models.forget();
    },
    async close() {
      pool.close();
      shared?.close();
    },
  };
}
