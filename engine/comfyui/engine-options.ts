// The worker engine's options (engine.ts).
import type { HttpDispatcher } from '../../lib/http-dispatcher.ts';
import type { Workflow } from '../types.ts';
import type { WorkerSlotRegistry } from './worker-slots.ts';

export interface ComfyEngineOptions {
  /** Base URLs of the workers, e.g. http://gpu-1:8188; may be empty (servers join later through addServer). */
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
  /**
   * How a free worker is chosen: 'affinity' (default) prefers one holding the job's models
   * (model-loaders.ts), least loaded among those; 'least-loaded' looks at the load alone.
   */
  routing?: 'affinity' | 'least-loaded';
  /**
   * With affinity, how long a job may wait for a busy worker holding its models (or leave a free one
   * to a waiting job that holds all of its own there) while another is free. Default 5 s: about one
   * checkpoint load from a local SSD, so a wrong bet costs at most about one load more, while a
   * holder that runs a short job (or loads a small model) first is waited for. bench/affinity shows
   * a bound under about one load plus one job gains little; raise it where loads take longer
   * (network storage, large models). 0: never wait, only choose among the free workers.
   */
  affinityWaitMs?: number;
  /** Models remembered per worker, least recently used forgotten first (default 8). */
  modelsPerServer?: number;
  /** An API-format workflow run on each worker when it comes up (and back) before it takes a job. */
  warmup?: Workflow;
  /** Bound on a warm-up (default 10 min: it may load several large models). */
  warmupTimeoutMs?: number;
  log?: (message: string, detail?: Record<string, unknown>) => void;
}
