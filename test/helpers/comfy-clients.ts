// The server the tests of public ComfyUI client libraries drive
// (test/client-*.test.ts): a real graphrun on a random port with the
// in-process engine, its built-in and test nodes, and `Hold`, a node that
// waits at a gate the test opens. Those clients subscribe to a prompt's
// events only once their POST /prompt has answered (as against the
// reference engine), so a test lets a job go on only when the client
// listens, instead of hoping the job is slower than the client.
import { expect } from 'vitest';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import type { ServiceOptions } from '../../index.ts';
import { decodePngRgba8 } from '../../lib/png/index.ts';
import { type Harness, startHarness } from './harness.ts';
import { createGates, type Gates, holdNode } from './hold-node.ts';
import { createTestNodes } from './local-nodes.ts';

export interface ClientServer extends Harness {
  /** host:port, as the clients take it. */
  host: string;
  gates: Gates;
}

/** A real server on a random port: built-in and test nodes plus Hold; every progress step is pushed. */
export async function startClientServer(options: Partial<ServiceOptions> = {}): Promise<ClientServer> {
  const gates = createGates();
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes, holdNode(gates)] });
  const h = await startHarness('node-server', { engine, progressIntervalMs: 0, ...options });
  return Object.assign(h, { host: new URL(h.base).host, gates });
}

/**
 * Hold nodes h1..hn in a chain, one per gate key, passing `value` on; the
 * last reports `steps` progress steps. Two gates let a test wait for a
 * client that subscribes only when it sees the job's next `executing`.
 */
function holdChain(keys: string[], value: number, steps: number): { nodes: Record<string, unknown>; last: string } {
  const nodes: Record<string, unknown> = {};
  keys.forEach((key, i) => {
    const input = i === 0 ? value : [`h${i}`, 0];
    nodes[`h${i + 1}`] = { class_type: 'Hold', inputs: { key, value: input, steps: i === keys.length - 1 ? steps : 0 } };
  });
  return { nodes, last: `h${keys.length}` };
}

/** Holds -> EmptyImage(width from the holds, height, color) -> `output` (SaveImage or PreviewImage) as node `o`. */
export function heldImageWorkflow(keys: string[], width: number, height: number, color: number, output = 'SaveImage', steps = 0) {
  const { nodes, last } = holdChain(keys, width, steps);
  return {
    ...nodes,
    e: { class_type: 'EmptyImage', inputs: { width: [last, 0], height, batch_size: 1, color } },
    o: { class_type: output, inputs: output === 'SaveImage' ? { images: ['e', 0], filename_prefix: 'client' } : { images: ['e', 0] } },
  };
}

/** Holds -> Show (node `s`): a job that runs once let go, reporting `steps` progress steps. */
export function heldValueWorkflow(keys: string[], value: number, steps = 0) {
  const { nodes, last } = holdChain(keys, value, steps);
  return { ...nodes, s: { class_type: 'Show', inputs: { value: [last, 0] } } };
}

/** Holds -> Fail (node `f`) -> Show: fails with a TypeError once let go. */
export function heldFailingWorkflow(keys: string[]) {
  const { nodes, last } = holdChain(keys, 1, 0);
  return { ...nodes, f: { class_type: 'Fail', inputs: { value: [last, 0] } }, s: { class_type: 'Show', inputs: { value: ['f', 0] } } };
}

/** LoadImage(name) -> ImageInvert -> ImageScale(width from the holds, height; nearest) -> SaveImage (node `s`). */
export function heldInvertWorkflow(keys: string[], name: string, width: number, height: number) {
  const { nodes, last } = holdChain(keys, width, 0);
  return {
    ...nodes,
    l: { class_type: 'LoadImage', inputs: { image: name } },
    i: { class_type: 'ImageInvert', inputs: { image: ['l', 0] } },
    c: { class_type: 'ImageScale', inputs: { image: ['i', 0], upscale_method: 'nearest-exact', width: [last, 0], height, crop: 'disabled' } },
    s: { class_type: 'SaveImage', inputs: { images: ['c', 0], filename_prefix: 'inverted' } },
  };
}

/** A workflow the server refuses: a node class it does not have. */
export const UNKNOWN_NODE_WORKFLOW = { x: { class_type: 'NoSuchNode', inputs: {} } };

/** Asserts the bytes are a PNG of this size whose every pixel is `rgb`. */
export function expectSolidPng(bytes: Uint8Array, width: number, height: number, rgb: [number, number, number]): void {
  const png = decodePngRgba8(bytes);
  expect({ width: png.width, height: png.height }).toEqual({ width, height });
  const wrong = [];
  for (let p = 0; p < width * height; p++) {
    const px = [...png.data.subarray(p * 4, p * 4 + 3)];
    if (px.some((v, i) => v !== rgb[i])) wrong.push({ p, px });
  }
  expect(wrong).toEqual([]);
}

/** The RGB of an EmptyImage color integer. */
export const rgbOf = (color: number): [number, number, number] => [(color >> 16) & 0xff, (color >> 8) & 0xff, color & 0xff];

/** Bounds a wait on an event, so a missing event fails the test with its name instead of hanging it. */
export function within<T>(what: string, promise: Promise<T>, ms = 10_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
