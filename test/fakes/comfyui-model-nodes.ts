// Model loaders for a fake engine server, so model-affinity routing can be
// tested and measured: CheckpointLoaderSimple and LoraLoader under the real
// server's class and input names, each charging `loadMs` for a model the
// server does not hold in memory (an LRU of `capacity` models, as the real
// server evicts under memory pressure), and FakeGenerate, the output node that
// uses the model, taking `ms` (the sampling) and waiting at the gate while the
// test holds it closed. Not cacheable: every prompt goes through the memory.
import { defineNode, type LocalNode } from '../../engine/local/define-node.ts';
import type { Workflow } from '../../engine/types.ts';

export interface ModelNodesOptions {
  checkpoints: string[];
  loras?: string[];
  /** Charged for each model not in memory (default 0). */
  loadMs?: number;
  /** Models held at once (default 2). */
  capacity?: number;
}

export interface ModelNodes {
  nodes: LocalNode[];
  /** Every model loaded (not found in memory), in order, as `folder/file`. */
  loads: string[];
  /** Models in memory, least recently used first. */
  memory(): string[];
  /** A restart or /free: memory emptied. */
  forget(): void;
  /** Closes the gate: FakeGenerate waits from now until open(). */
  hold(): void;
  open(): void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function createModelNodes(opts: ModelNodesOptions): ModelNodes {
  const held = new Map<string, true>();
  const loads: string[] = [];
  const capacity = opts.capacity ?? 2;
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};

  async function load(model: string): Promise<void> {
    if (held.delete(model)) return void held.set(model, true);
    loads.push(model);
    if (opts.loadMs) await sleep(opts.loadMs);
    held.set(model, true);
    for (const m of held.keys()) if (held.size > capacity) held.delete(m);
  }

  const nodes = [
    defineNode({
      name: 'CheckpointLoaderSimple',
      category: 'loaders',
      cacheable: false,
      required: { ckpt_name: [opts.checkpoints, {}] },
      outputs: [{ type: 'MODEL' }],
      async run({ ckpt_name }) {
        await load(`checkpoints/${ckpt_name}`);
        return { outputs: [String(ckpt_name)] };
      },
    }),
    defineNode({
      name: 'LoraLoader',
      category: 'loaders',
      cacheable: false,
      required: { model: ['MODEL', {}], lora_name: [opts.loras ?? ['none.safetensors'], {}] },
      outputs: [{ type: 'MODEL' }],
      async run({ model, lora_name }) {
        await load(`loras/${lora_name}`);
        return { outputs: [`${model}+${lora_name}`] };
      },
    }),
    defineNode({
      name: 'FakeGenerate',
      category: 'sampling',
      cacheable: false,
      output_node: true,
      required: { model: ['MODEL', {}], seed: ['INT', { default: 0, min: 0, max: 1e9 }], ms: ['INT', { default: 0, min: 0, max: 600000 }] },
      async run({ model, ms }) {
        await gate;
        if (ms) await sleep(ms as number);
        return { outputs: [], ui: { text: [String(model)] } };
      },
    }),
  ];
  return {
    nodes,
    loads,
    memory: () => [...held.keys()],
    forget: () => held.clear(),
    hold() {
      gate = new Promise<void>((r) => (open = r));
    },
    open: () => open(),
  };
}

/** A job that loads `checkpoint` (and a LoRA when given), then generates for `ms`. */
export function modelWorkflow(checkpoint: string, seed: number, ms = 0, lora?: string): Workflow {
  const wf: Workflow = { c: { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: checkpoint } } };
  if (lora) wf.l = { class_type: 'LoraLoader', inputs: { model: ['c', 0], lora_name: lora } };
  wf.g = { class_type: 'FakeGenerate', inputs: { model: [lora ? 'l' : 'c', 0], seed, ms } };
  return wf;
}
