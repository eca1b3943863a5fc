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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

const flood = defineNode({
  name: 'Flood',
  category: 'test',
  output_node: true,
  cacheable: false,
  required: {
    count: ['INT', { default: 10, min: 1, max: 1000 }],
    size: ['INT', { default: 1024, min: 1, max: 8 * 1024 * 1024 }],
    ms: ['INT', { default: 0, min: 0, max: 1000 }],
  },
  run: async ({ count, size, ms }, ctx) => {
    for (let i = 0; i < (count as number); i++) {
      ctx.signal.throwIfAborted();
      // A fake JPEG: the stream passes preview bytes through as they are.
      const bytes = new Uint8Array(size as number).fill(i % 256);
      ctx.preview(bytes, 'jpeg');
      // A pause, so a client that reads keeps up while one that does not falls behind.
      await sleep(ms as number);
    }
    return { outputs: [] };
  },
});

export interface WsHarness extends Harness {
  /** Requests as the account holding `key`. */
  as(key: string): Harness;
}

export async function startWsHarness(options: Partial<ServiceOptions> = {}): Promise<WsHarness> {
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, say, flood] });
  const h = await startHarness('node-server', {
    engine,
    accounts: [
      { id: ALICE.id, tier: 'pro', apiKeys: [ALICE.key] },
      { id: BOB.id, tier: 'pro', apiKeys: [BOB.key] },
    ],
    progressIntervalMs: 0,
    ...options,
  });
  return Object.assign(h, { as: (key: string) => asKey(h, key) });
}
