// `Relay`, a node for following a job from another instance: it waits at a
// gate the test opens, reports step 1 of 2, sends a large preview and
// commits an image output, waits at a second gate, reports step 2 and ends.
// So a test knows the job is running (blocked at the second gate) while it
// checks what reached the other instance, and lets it end when it is done.
import { defineNode, type LocalNode } from '../../engine/local/define-node.ts';
import type { Workflow } from '../../engine/types.ts';
import { makePng } from './cloud-files.ts';

export interface RelayGates {
  /** Lets the Relay node of `key` past gate `which`, whether it waits there yet or not. */
  open(key: string, which: 'start' | 'end'): void;
}

/** Incompressible preview bytes (their base64 is 4/3 as long): a preview over NOTIFY's 8000 bytes. */
export function previewBytes(n: number, seed = 7): Uint8Array {
  let x = seed;
  return Uint8Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return x >>> 24;
  });
}

export const RELAY_OUTPUT = makePng(3, 2, 3, (x, y) => [x * 80, y * 120, 40]);

export function createRelayNode(): { node: LocalNode; gates: RelayGates } {
  const gates = new Map<string, { promise: Promise<void>; resolve(): void }>();
  const gate = (key: string) => {
    let g = gates.get(key);
    if (!g) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      gates.set(key, (g = { promise, resolve }));
    }
    return g;
  };
  const pass = (key: string, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      gate(key).promise.then(resolve);
    });
  const node = defineNode({
    name: 'Relay',
    category: 'test',
    output_node: true,
    cacheable: false,
    required: { key: ['STRING', {}], preview_bytes: ['INT', { default: 12_000, min: 1, max: 1_000_000 }] },
    run: async ({ key, preview_bytes }, ctx) => {
      await pass(`${key}/start`, ctx.signal);
      ctx.progress(1, 2);
      ctx.preview(previewBytes(preview_bytes as number), 'png');
      await ctx.commitOutput({ name: 'relay.png', type: 'image', content_type: 'image/png', body: RELAY_OUTPUT });
      await pass(`${key}/end`, ctx.signal);
      ctx.progress(2, 2);
      return { outputs: [], ui: { images: [{ filename: 'relay.png', subfolder: '', type: 'output' }] } };
    },
  });
  return { node, gates: { open: (key, which) => gate(`${key}/${which}`).resolve() } };
}

/** One Relay node, `r`. */
export const relayWorkflow = (key: string, previewBytesCount = 12_000): Workflow => ({
  r: { class_type: 'Relay', inputs: { key, preview_bytes: previewBytesCount } },
});
