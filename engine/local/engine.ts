// The in-process engine: validates, plans, and runs a workflow's nodes one
// after another within the job's memory budget, serving from a cross-job LRU
// cache what an identical subgraph already computed, and reporting through
// the job's context.
// Lists: a node runs once with its inputs as given; the reference's per-index
// runs (INPUT_IS_LIST / OUTPUT_IS_LIST) are not implemented yet.
// Nodes must treat their inputs as read-only: cached values are shared.
import { type Engine, type EngineJob, type ExecutionContext, ExecutionError, type Workflow } from '../types.ts';
import { validateWorkflow } from '../validate-workflow.ts';
import type { LocalNode, NodeResult } from './define-node.ts';
import { createLruCache } from './lru-cache.ts';
import { admitNode, DEFAULT_MAX_JOB_MEMORY_BYTES } from './memory-budget.ts';
import { checkMemory } from './memory-check.ts';
import { builtinNodes } from './nodes/index.ts';
import { DependencyCycleError, type PlannedNode, planExecution } from './plan.ts';
import { createRegistry } from './registry.ts';
import { runNode, throwIfAborted } from './run-node.ts';

export interface LocalEngineOptions {
  /** Node classes this engine runs; all built-in nodes when absent. */
  nodes?: LocalNode[];
  /** Operator settings nodes may consult (NodeRunContext.settings). */
  settings?: Record<string, unknown>;
  /** Node results kept across jobs; default 256, 0 turns the cache off. */
  cacheSize?: number;
  /**
   * Bytes one job's node results may hold (images as Float32, every result
   * alive until the job ends), plus what the running node needs besides.
   * Workflows whose declared sizes cannot fit are refused at validation; a
   * node over budget at run time fails the job with OOMError before it
   * allocates. Default 1 GiB.
   */
  maxJobMemoryBytes?: number;
}

export function createLocalEngine(opts: LocalEngineOptions = {}): Engine {
  const registry = createRegistry(opts.nodes ?? builtinNodes);
  const settings = Object.freeze({ ...opts.settings });
  const cache = createLruCache<NodeResult>(opts.cacheSize ?? 256);
  const maxJobMemoryBytes = opts.maxJobMemoryBytes ?? DEFAULT_MAX_JOB_MEMORY_BYTES;
  const validate = (workflow: unknown) =>
    checkMemory(workflow as Workflow, registry, validateWorkflow(workflow, registry.definitionOf), maxJobMemoryBytes);

  async function execute(job: EngineJob, ctx: ExecutionContext): Promise<void> {
    throwIfAborted(ctx.signal);
    const checked = validate(job.workflow);
    if (!checked.ok) {
      const { message, details } = checked.error;
      throw new ExecutionError(details ? `${message}: ${details}` : message, 'ValidationError');
    }
    const plan = await planExecution(job.workflow, registry, checked.outputs).catch((err: unknown) => {
      if (err instanceof DependencyCycleError) throw new ExecutionError(err.message, err.name, err.node_ids[0]);
      throw err;
    });
    ctx.emit({ type: 'execution_start' });

    // Hits are taken now: the LRU may evict them while this job runs.
    const results = new Map<string, NodeResult>();
    const cached: string[] = [];
    for (const p of plan) {
      const hit = acrossJobs(p) ? cache.get(p.cache_key) : undefined;
      if (hit) {
        results.set(p.cache_key, hit);
        cached.push(p.id);
      }
    }
    ctx.emit({ type: 'cached', node_ids: cached });

    const byId = new Map(plan.map((p) => [p.id, p]));
    for (const p of needed(plan, byId, results)) {
      throwIfAborted(ctx.signal);
      // An identical node earlier in this job (or a cache hit) already has the result.
      let result = results.get(p.cache_key);
      if (!result) {
        ctx.emit({ type: 'executing', node_id: p.id, class_type: p.class_type });
        const inputs: Record<string, unknown> = {};
        for (const [name, input] of Object.entries(p.inputs)) {
          inputs[name] = 'link' in input ? results.get(byId.get(input.link[0])!.cache_key)!.outputs[input.link[1]] : input.value;
        }
        const maxBytes = admitNode(p, inputs, results, maxJobMemoryBytes);
        result = await runNode(p, inputs, ctx, settings, maxBytes);
        results.set(p.cache_key, result);
        if (acrossJobs(p)) cache.set(p.cache_key, result);
      } else if (!cached.includes(p.id)) {
        // A twin of a node that ran earlier in this job: served, not run, and said so, so progress counts it done.
        ctx.emit({ type: 'cached', node_ids: [p.id] });
      }
      if (result.ui || p.node.definition.output_node) ctx.emit({ type: 'executed', node_id: p.id, output: result.ui ?? {} });
    }
  }

  return {
    name: 'local',
    readiness: () => ({ state: 'ready' }),
    nodeDefinitions: async () => registry.definitions(),
    validate: async (workflow) => validate(workflow),
    execute,
    close: async () => cache.clear(),
  };
}

/**
 * Whether a node's result may come from, or go to, the cross-job cache. Output
 * nodes never do: they commit the job's own outputs (assets of its account),
 * so each job runs them, fed from the cache; a cached one would leave the job
 * without outputs and show another job's files.
 */
const acrossJobs = (p: PlannedNode) => p.cacheable && !p.node.definition.output_node;

/** The plan's nodes that must be visited: walking back from the outputs, stopping at nodes that have a result. */
function needed(plan: PlannedNode[], byId: Map<string, PlannedNode>, results: Map<string, NodeResult>): PlannedNode[] {
  const keep = new Set<string>();
  // A stack of its own: a chain of any length cannot overflow the call stack.
  const stack = plan.filter((p) => p.node.definition.output_node);
  while (stack.length > 0) {
    const p = stack.pop()!;
    if (keep.has(p.id)) continue;
    keep.add(p.id);
    if (results.has(p.cache_key)) continue;
    for (const input of Object.values(p.inputs)) if ('link' in input) stack.push(byId.get(input.link[0])!);
  }
  return plan.filter((p) => keep.has(p.id));
}
