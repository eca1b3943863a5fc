// The Node process's metrics for GET /metrics (ServiceOptions.metrics): CPU,
// memory, heap, handles, GC and event-loop delay, from prom-client's default
// collectors, under their usual names (process_*, nodejs_*) so the common
// Node dashboards read them as they are. Node-only, hence here and not in
// the core, which appends what `collect()` renders to its own families.
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { MetricsSource } from '../../core/types.ts';

// One registry per process: the collectors watch the process (an event-loop
// delay monitor, a GC observer), and every service in it reports the same.
let shared: Registry | undefined;

function processRegistry(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
  }
  return shared;
}

/** The process's metrics in the Prometheus text format, for createService's `metrics` option. */
export function createProcessMetrics(): MetricsSource {
  const registry = processRegistry();
  return { collect: () => registry.metrics() };
}
