// The in-process engine: validates, plans, and runs a workflow's nodes,
// serving from a cross-job cache (per account, bounded in bytes) what an
// identical subgraph already computed, and reporting through the job's
// context. Where the runtime can, jobs run in a pool of worker threads, so
// computing never holds up the thread that serves requests and a cancel
// stops a job inside a long node; otherwise (or with `threads: false`) they
// run on the calling thread, stopping between nodes and steps.
import type { Engine, EngineJob, ExecutionContext } from '../types.ts';
import type { LocalNode } from './define-node.ts';
import { DEFAULT_MAX_JOB_MEMORY_BYTES } from './memory-budget.ts';
import { builtinNodes } from './nodes/index.ts';
import { createRegistry } from './registry.ts';
import { createResultCache } from './result-cache.ts';
import { runJob, validateLocal } from './run-job.ts';
import { createThreadPool, type ThreadPool } from './thread/pool.ts';
import type { ThreadSpawner } from './thread/protocol.ts';
import { webWorkerSpawner } from './thread/web.ts';

const MiB = 1024 * 1024;

export interface LocalEngineOptions {
  /** Node classes this engine runs; all built-in nodes when absent. */
  nodes?: LocalNode[];
  /**
   * A module whose `nodes` export is the same list as `nodes`: what worker
   * threads load, since node functions cannot cross threads. Without it, an
   * engine given `nodes` runs on the calling thread.
   */
  nodesModule?: string | URL;
  /** Operator settings nodes may consult (NodeRunContext.settings). */
  settings?: Record<string, unknown>;
  /** Node results kept across jobs; default 256, 0 turns the cache off. */
  cacheSize?: number;
  /** Bytes those results may hold, all threads together; default 256 MiB. */
  cacheBytes?: number;
  /**
   * Bytes one job's node results may hold (images as Float32, every result
   * alive until the job ends), plus what the running node needs besides.
   * Workflows whose declared sizes cannot fit are refused at validation; a
   * node over budget at run time fails the job with OOMError before it
   * allocates; on Node it is also each worker thread's heap limit. Default 1 GiB.
   */
  maxJobMemoryBytes?: number;
  /**
   * How worker threads start: the Node adapter's nodeThreadSpawner() on
   * Node, Web Workers where the runtime has them (the default); false runs
   * every job on the calling thread.
   */
  threads?: ThreadSpawner | false;
  /** Worker threads at most; default: the spawner's parallelism (the cores). */
  threadCount?: number;
}

export function createLocalEngine(opts: LocalEngineOptions = {}): Engine {
  const registry = createRegistry(opts.nodes ?? builtinNodes);
  const settings = Object.freeze({ ...opts.settings });
  const limits = { entries: opts.cacheSize ?? 256, bytes: opts.cacheBytes ?? 256 * MiB };
  const maxJobMemoryBytes = opts.maxJobMemoryBytes ?? DEFAULT_MAX_JOB_MEMORY_BYTES;
  const pool = threadPool(opts, registry, settings, limits, maxJobMemoryBytes);
  const cache = pool ? null : createResultCache(limits);

  async function execute(job: EngineJob, ctx: ExecutionContext): Promise<void> {
    if (pool) return pool.run(job, ctx);
    return runJob(job, ctx, { registry, settings, cache, maxJobMemoryBytes });
  }

  return {
    name: 'local',
    readiness: () => ({ state: 'ready' }),
    nodeDefinitions: async () => registry.definitions(),
    validate: async (workflow) => validateLocal(workflow, registry, maxJobMemoryBytes),
    execute,
    close: async () => {
      pool?.close();
      cache?.clear();
    },
  };
}

function threadPool(
  opts: LocalEngineOptions,
  registry: ReturnType<typeof createRegistry>,
  settings: Readonly<Record<string, unknown>>,
  limits: { entries: number; bytes: number },
  maxJobMemoryBytes: number,
): ThreadPool | null {
  if (opts.threads === false) return null;
  if (opts.nodes && !opts.nodesModule) {
    if (opts.threads) throw new TypeError('createLocalEngine: worker threads need `nodesModule` to load the `nodes` given');
    return null;
  }
  const spawner = opts.threads ?? webWorkerSpawner();
  if (!spawner) return null;
  const size = opts.threadCount ?? spawner.parallelism;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`threadCount must be a whole number >= 1, got ${size}`);
  const plain: Record<string, unknown> = {};
  const settingCalls: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value === 'function') settingCalls.push(name);
    else if (value !== undefined) plain[name] = value;
  }
  return createThreadPool({
    spawner,
    size,
    heapMb: Math.max(64, Math.ceil(maxJobMemoryBytes / MiB)),
    registry,
    settings,
    setup: {
      nodesModule: opts.nodesModule === undefined ? undefined : String(opts.nodesModule),
      settings: plain,
      settingCalls,
      // Each thread has a cache of its own: the byte budget is shared out.
      cache: { entries: limits.entries, bytes: Math.floor(limits.bytes / size) },
      maxJobMemoryBytes,
    },
  });
}
