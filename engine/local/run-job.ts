// One job of the local engine from start to end: validation, the plan, the
// cross-job cache, then the nodes one after another, reporting through the
// job's context. The same loop runs on the calling thread (inline engines)
// and inside a worker thread, where `elsewhere` hands the nodes that must run
// beside the service (partner nodes) back to the request thread.
// Lists: a node runs once with its inputs as given; the reference's per-index
// runs (INPUT_IS_LIST / OUTPUT_IS_LIST) are not implemented yet.
// Nodes must treat their inputs as read-only: cached values are shared.
import { type EngineJob, type ExecutionContext, ExecutionError } from '../types.ts';
import { type LocalValidationResult, validateWorkflow } from '../validate-workflow.ts';
import type { NodeResult } from './define-node.ts';
import { admitNode } from './memory-budget.ts';
import { checkMemory } from './memory-check.ts';
import { DependencyCycleError, type PlannedNode, planExecution } from './plan.ts';
import type { NodeRegistry } from './registry.ts';
import type { ResultCache } from './result-cache.ts';
import { runNode, throwIfAborted } from './run-node.ts';

export interface JobEnvironment {
  registry: NodeRegistry;
  settings: Readonly<Record<string, unknown>>;
  /** Results kept across jobs; null when off. */
  cache: ResultCache | null;
  /** One job's memory: what its results and the running node may hold. */
  maxJobMemoryBytes: number;
  /** Runs a node away from this thread; when absent every node runs here. */
  elsewhere?: {
    wants(p: PlannedNode): boolean;
    run(p: PlannedNode, inputs: Record<string, unknown>, maxBytes: number): Promise<NodeResult>;
  };
}

/** The reference's validation, then whether the declared sizes fit the job's memory. */
export function validateLocal(workflow: unknown, registry: NodeRegistry, maxJobMemoryBytes: number): LocalValidationResult {
  return checkMemory(workflow as EngineJob['workflow'], registry, validateWorkflow(workflow, registry.definitionOf), maxJobMemoryBytes);
}

export async function runJob(job: EngineJob, ctx: ExecutionContext, env: JobEnvironment): Promise<void> {
  throwIfAborted(ctx.signal);
  const checked = validateLocal(job.workflow, env.registry, env.maxJobMemoryBytes);
  if (!checked.ok) {
    const { message, details } = checked.error;
    throw new ExecutionError(details ? `${message}: ${details}` : message, 'ValidationError');
  }
  const plan = await planExecution(job.workflow, env.registry, checked.outputs).catch((err: unknown) => {
    if (err instanceof DependencyCycleError) throw new ExecutionError(err.message, err.name, err.node_ids[0]);
    throw err;
  });
  ctx.emit({ type: 'execution_start' });

  // One account's results serve only that account: a hit would tell it that another ran the same subgraph.
  const cacheKey = (p: PlannedNode) => `${job.account_id}\n${p.cache_key}`;
  // Hits are taken now: the cache may evict them while this job runs.
  const results = new Map<string, NodeResult>();
  // A set: a 10,000-node job must not search a list once per node.
  const cached = new Set<string>();
  for (const p of plan) {
    const hit = acrossJobs(p) ? env.cache?.get(cacheKey(p)) : undefined;
    if (hit) {
      results.set(p.cache_key, hit);
      cached.add(p.id);
    }
  }
  ctx.emit({ type: 'cached', node_ids: [...cached] });

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
      // Admitted before it allocates: over budget, the job fails with OOMError and the node never runs.
      const maxBytes = admitNode(p, inputs, results, env.maxJobMemoryBytes);
      result = env.elsewhere?.wants(p) ? await env.elsewhere.run(p, inputs, maxBytes) : await runNode(p, inputs, ctx, env.settings, maxBytes);
      results.set(p.cache_key, result);
      if (acrossJobs(p)) env.cache?.set(cacheKey(p), result);
    } else if (!cached.has(p.id)) {
      // A twin of a node that ran earlier in this job: served, not run, and said so, so progress counts it done.
      ctx.emit({ type: 'cached', node_ids: [p.id] });
    }
    if (result.ui || p.node.definition.output_node) ctx.emit({ type: 'executed', node_id: p.id, output: result.ui ?? {} });
  }
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
