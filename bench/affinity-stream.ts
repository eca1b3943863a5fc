// The job stream of bench/affinity.ts: a seeded, skewed (Zipf) choice of a
// checkpoint per job, a LoRA on some, so both routings get the same jobs.
import type { Workflow } from '../engine/types.ts';
import { seededRandom } from '../providers/local/music/seed.ts';
import { modelWorkflow } from '../test/fakes/comfyui-model-nodes.ts';

export interface StreamOptions {
  jobs: number;
  checkpoints: string[];
  loras: string[];
  /** Share of the jobs that also load a LoRA. */
  loraShare: number;
  /** Zipf exponent: the k-th checkpoint is chosen with weight 1 / k^s. */
  zipf: number;
  /** Sampling time of each job on the server. */
  runMs: number;
  seed: number;
}

export function jobStream(o: StreamOptions): Workflow[] {
  const next = seededRandom(o.seed);
  const weights = o.checkpoints.map((_, k) => 1 / (k + 1) ** o.zipf);
  const total = weights.reduce((a, b) => a + b, 0);
  const pick = () => {
    let r = next() * total;
    for (let k = 0; k < weights.length; k++) if ((r -= weights[k]) < 0) return o.checkpoints[k];
    return o.checkpoints[weights.length - 1];
  };
  return Array.from({ length: o.jobs }, (_, i) => {
    const ckpt = pick();
    const lora = next() < o.loraShare ? o.loras[Math.floor(next() * o.loras.length)] : undefined;
    // A new seed per job: the server's cache serves none of them.
    return modelWorkflow(ckpt, i + 1, o.runMs, lora);
  });
}
