// The `/ws` tests' server: a real Node server (the stream needs one) whose
// engine runs the built-in nodes, the test nodes, and two nodes of its own:
// `Say` (a TEXT binary event) and `Flood` (many large previews, for the
// slow-client test). Two accounts with keys, so isolation can be checked.

import { defineNode } from '../../engine/local/define-node.ts';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import type { ServiceOptions } from '../../index.ts';
import { type Harness, startHarness } from './harness.ts';
import { asKey } from './jobs.ts';
import { createTestNodes } from './local-nodes.ts';

export const ALICE = { id: 'alice', key: 'key-alice' };
export const BOB = { id: 'bob', key: 'key-bob' };

const say = defineNode({
  name: 'Say',
  category: 'test',
  output_node: true,
  required: { text: ['STRING', {}] },
  run: ({ text }, ctx) => {
    ctx.text(String(text));
    return { outputs: [], ui: { text: [String(text)] } };
  },
});

/** Waited for before Flood sends preview `i`: a test paces the flood on what a reading client has received. */
export type FloodPace = (i: number) => Promise<void>;

const floodNode = (pace: { before?: FloodPace }) =>
  defineNode({
    name: 'Flood',
    category: 'test',
    output_node: true,
    cacheable: false,
    required: {
      count: ['INT', { default: 10, min: 1, max: 1000 }],
      size: ['INT', { default: 1024, min: 1, max: 8 * 1024 * 1024 }],
    },
    run: async ({ count, size }, ctx) => {
      for (let i = 0; i < (count as number); i++) {
        // Paced by the test, so a client that reads keeps up however busy the machine, while one that does not falls behind.
        await pace.before?.(i);
        ctx.signal.throwIfAborted();
        // A fake JPEG: the stream passes preview bytes through as they are.
        ctx.preview(new Uint8Array(size as number).fill(i % 256), 'jpeg');
      }
      return { outputs: [] };
    },
  });

export interface WsHarness extends Harness {
  /** Requests as the account holding `key`. */
  as(key: string): Harness;
  /** How the Flood node paces itself (set `before`; none = as fast as it can). */
  floodPace: { before?: FloodPace };
}

export async function startWsHarness(options: Partial<ServiceOptions> = {}): Promise<WsHarness> {
  const floodPace: WsHarness['floodPace'] = {};
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, say, floodNode(floodPace)] });
  const h = await startHarness('node-server', {
    engine,
    accounts: [
      { id: ALICE.id, tier: 'pro', apiKeys: [ALICE.key] },
      { id: BOB.id, tier: 'pro', apiKeys: [BOB.key] },
    ],
    progressIntervalMs: 0,
    ...options,
  });
  return Object.assign(h, { as: (key: string) => asKey(h, key), floodPace });
}
