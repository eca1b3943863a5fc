// The `Ticks` node of the event benchmarks (bench:events, bench:event-latency):
// `steps` progress steps, each sent when the benchmark's pacing says, so what
// they measure is the path an event takes, not a queue of them.
import { defineNode } from '../engine/local/define-node.ts';

/** `step(i, n, emit)` calls `emit()` to send step i of n and resolves when the next may go. */
export type PaceStep = (i: number, n: number, emit: () => void) => Promise<void>;

export function ticksNode(step: PaceStep) {
  return defineNode({
    name: 'Ticks',
    category: 'bench',
    output_node: true,
    cacheable: false,
    required: { steps: ['INT', { min: 1, max: 1_000_000 }] },
    run: async ({ steps }, ctx) => {
      const n = steps as number;
      for (let i = 1; i <= n; i++) await step(i, n, () => ctx.progress(i, n));
      return { outputs: [], ui: { text: [String(n)] } };
    },
  });
}
