// Whether the engine answered some of a job's nodes from results of an
// earlier run: the job's `outputs_reused`, and which nodes (what history
// shows as execution_cached). Engines say so with a `cached` event naming
// those nodes at the start of a run (the reference's execution_cached, sent
// once, after execution_start), possibly empty. The local engine also
// reports, later, a node served by its twin that ran earlier in the same job;
// that result was computed by this job, not reused, so only `cached` reports
// between an execution_start and the first node executing count (a run that
// moved to another worker starts again).
import type { EngineEvent } from '../../engine/types.ts';

export interface ReuseTracker {
  update(event: EngineEvent): void;
  /** True once a node was answered from an earlier run's results. */
  readonly reused: boolean;
  /** The nodes the latest start reported served from cache, in the engine's order; null before any report. */
  readonly cachedNodes: string[] | null;
}

export function createReuseTracker(): ReuseTracker {
  let reused = false;
  let executing = false;
  let cached: Set<string> | null = null;
  return {
    update(event) {
      if (event.type === 'execution_start') {
        executing = false;
        cached = null;
      } else if (event.type === 'executing') executing = true;
      else if (event.type === 'cached' && !executing) {
        cached ??= new Set();
        for (const id of event.node_ids) cached.add(id);
        if (event.node_ids.length > 0) reused = true;
      }
    },
    get reused() {
      return reused;
    },
    get cachedNodes() {
      return cached === null ? null : [...cached];
    },
  };
}
