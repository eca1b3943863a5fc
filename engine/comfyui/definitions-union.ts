// The node classes of the pool: the union of its active workers' /object_info
// (a job goes to a worker that has all of its own). It is built again only
// when the members changed (one joined, drained, left) or one's definitions
// object was replaced (a refresh): it is asked for several times per job, and
// a worker has hundreds of classes. A draining worker's classes do not count,
// as it takes no new job.
import type { NodeDefinition } from '../types.ts';
import type { DefinitionOf } from '../validate-workflow.ts';
import type { PoolWorker } from './pool.ts';

export interface Union {
  members: PoolWorker[];
  sources: Array<Record<string, NodeDefinition> | null>;
  defs: Record<string, NodeDefinition>;
  empty: boolean;
  /** Built at the first validation after each change. */
  lookup?: DefinitionOf;
}

export function unionOf(workers: readonly PoolWorker[], last: Union | null): Union {
  const members = workers.filter((w) => w.state === 'active');
  const sources = members.map((w) => w.defs);
  const same = last && last.members.length === members.length && members.every((w, i) => w === last.members[i] && sources[i] === last.sources[i]);
  if (same) return last;
  const defs: Record<string, NodeDefinition> = {};
  for (const d of sources) if (d) for (const k in d) if (Object.hasOwn(d, k)) defs[k] ??= d[k];
  return { members, sources, defs, empty: Object.keys(defs).length === 0 };
}
