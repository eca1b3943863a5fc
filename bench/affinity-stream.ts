// The job stream of bench/affinity.ts: a seeded, skewed (Zipf) choice of a
// checkpoint per job, a LoRA on some, so both routings get the same jobs.
import type { Workflow } from '../engine/types.ts';
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

/** mulberry32: small, seeded, good enough to draw a job stream. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function jobStream(o: StreamOptions): Workflow[] {
  const next = random(o.seed);
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
