// Model-affinity routing: among the workers free for a job, those holding
// more of its models come first (least loaded first among equals, then the
// one holding fewest models, where a load evicts least). Within the
// operator's bound (affinityWaitMs) a job also waits rather than load its
// models: for a busy worker that holds more of them than any free one, and
// instead of taking a free worker that holds all the models of another
// waiting job (which takes it instead: one load saved rather than one
// made). Past the bound it takes any free worker: loading a checkpoint costs
// seconds to minutes, a wait on a holder about to finish less, and the bound
// caps what a wrong guess costs.
import type { SlotRequest } from './pool.ts';
import type { SlotWorker } from './slot-acquire.ts';

/** How many of the models the worker holds (as far as the pool knows). */
export function heldBy(w: SlotWorker, models: readonly string[]): number {
  let n = 0;
  for (const m of models) if (w.models.holds(m)) n++;
  return n;
}

export type AffinityChoice = { list: SlotWorker[] } | { holdFor: 'busy-holder' | 'other-job' };

export interface AffinityInput {
  /** The free workers for the job, least loaded first. */
  free: SlotWorker[];
  /** Every worker that may take the job (busy ones included). */
  eligible: readonly SlotWorker[];
  req: SlotRequest;
  /** The other jobs waiting for a slot now. */
  waiting: Iterable<SlotRequest>;
  /** The job is within its bound. */
  mayWait: boolean;
  /** Whether a worker may take that job at all (its node classes, not the worker it just lost). */
  fits(w: SlotWorker, r: SlotRequest): boolean;
}

export function byAffinity({ free, eligible, req, waiting, mayWait, fits }: AffinityInput): AffinityChoice {
  const models = req.models ?? [];
  if (models.length === 0) return { list: free };
  const score = new Map(free.map((w) => [w, heldBy(w, models)]));
  const list = [...free].sort((a, b) => score.get(b)! - score.get(a)! || a.running - b.running || a.models.size() - b.models.size());
  if (!mayWait) return { list };
  const bestFree = Math.max(0, ...score.values());
  if (bestFree < models.length) {
    const busyBest = Math.max(0, ...eligible.filter((w) => !score.has(w) && w.healthy && w.state === 'active').map((w) => heldBy(w, models)));
    if (busyBest > bestFree) return { holdFor: 'busy-holder' };
  }
  // A free worker where this job would load something, but another waiting job would load nothing, is left to that one.
  const others = [...waiting].filter((r) => r !== req && r.models?.length);
  const wantedElsewhere = (w: SlotWorker) => others.some((r) => fits(w, r) && heldBy(w, r.models!) === r.models!.length);
  const mine = list.filter((w) => score.get(w) === models.length || !wantedElsewhere(w));
  return mine.length > 0 ? { list: mine } : { holdFor: 'other-job' };
}
