// The wrapper around every node class the fake worker runs: it serves a
// node from the fake's cache instead of running it, applies the failure
// switches of the execution side (slow nodes, hung nodes, injected errors,
// see comfyui-failures.ts), and applies interrupts where the real server
// checks for them.
import type { LocalNode, NodeResult, NodeRunContext } from '../../engine/local/define-node.ts';
import { type FakeWorkerFailures, resolveInjected } from './comfyui-failures.ts';

/** An injected failure as the real server reports it. */
export interface InjectedReport {
  exception_message: string;
  traceback: string[];
}

/** What a wrapped node asks of, and tells, the prompt it runs in. */
export interface NodeObserver {
  /** The node's result kept from an earlier prompt (the cache): it is served, not run. */
  fromCache(node_id: string): NodeResult | undefined;
  /** About to run with these inputs (execution_error's current_inputs). */
  nodeStarted(node_id: string, class_type: string, inputs: Record<string, unknown>): void;
  /** Returned; `hasUi` says whether an `executed` event follows. */
  nodeFinished(node_id: string, result: NodeResult, hasUi: boolean): void;
  /** Aborted as soon as /interrupt comes: what a node that checks for interrupts (steps, waits) watches. */
  readonly interruptSignal: AbortSignal;
  /** Makes an interrupt that came take effect (the prompt's signal aborts, it ends interrupted); true when one had come. */
  takeInterrupt(): boolean;
  /** Set when the node failed by injection: what to report instead of the JS error. */
  injected: InjectedReport | null;
}

export interface NodeHooks {
  failures: FakeWorkerFailures;
  /** The prompt a node runs in, by its job's abort signal. */
  runFor(signal: AbortSignal): NodeObserver | undefined;
  /** Resolves when stuck hangs are released (unstick() or close of the fake). */
  released(): Promise<void>;
}

/**
 * Wraps a node class so the fake's execution switches apply to it, and so it
 * is served from the cache and interrupted where the real server does it:
 * an interrupt is checked before each node that runs (not a cached one) and
 * at each progress step; a node that ignores it finishes, and the next one
 * is where the prompt stops. The switches' waits (slow nodes, hangs) and a
 * node that watches its signal stop at once instead, as a sampler does.
 */
export function wrapNode(node: LocalNode, hooks: NodeHooks): LocalNode {
  const class_type = node.definition.name;
  return {
    ...node,
    async run(inputs, ctx) {
      const f = hooks.failures;
      const run = hooks.runFor(ctx.signal);
      const hit = run?.fromCache(ctx.node_id);
      if (hit) return hit;
      run?.nodeStarted(ctx.node_id, class_type, inputs);
      // The engine's signal aborts only now, so the engine stops at this node and names it.
      if (run?.takeInterrupt()) throw ctx.signal.reason;
      const signal = run?.interruptSignal ?? ctx.signal;
      const nodeCtx: NodeRunContext = run
        ? {
            ...ctx,
            signal,
            progress(value, max) {
              run.takeInterrupt();
              ctx.progress(value, max);
            },
          }
        : ctx;
      let result: NodeResult;
      try {
        if (f.nodeDelayMs > 0) await sleep(f.nodeDelayMs, signal);
        if (f.hang) {
          const mode = f.hang;
          f.hang = false;
          if (mode === 'stuck') {
            await hooks.released();
            // An interrupt sent meanwhile is honoured now (below): the prompt ends interrupted.
            throw new Error('the node was stuck');
          }
          await sleep(2 ** 31 - 1, signal);
        }
        const inj = f.error;
        if (inj && (!inj.class_type || inj.class_type === class_type) && (!inj.node_id || inj.node_id === ctx.node_id)) {
          if (!inj.sticky) f.error = null;
          const { exception_type, exception_message, traceback } = resolveInjected(inj);
          if (run) run.injected = { exception_message, traceback };
          throw Object.assign(new Error(exception_message), { exception_type });
        }
        result = await node.run(inputs, nodeCtx);
      } catch (err) {
        // A node that stopped after an interrupt came stopped for it: the prompt ends interrupted.
        if (run?.interruptSignal.aborted) run.takeInterrupt();
        throw err;
      }
      run?.nodeFinished(ctx.node_id, result, Boolean(result?.ui) || node.definition.output_node);
      return result;
    },
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
