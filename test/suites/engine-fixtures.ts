// Workflows and pixel checks for the engine conformance suite. Only core node
// classes of the reference are used, so a worker engine driving real engine
// servers can run the same workflows. Decoding PNGs with the local engine's
// codec is a test-only convenience: any conforming PNG decodes the same.
import { expect } from 'vitest';
import type { Engine, EngineJob, Workflow } from '../../engine/types.ts';
import { decodePng } from '../../lib/png/index.ts';

export interface EngineFixture {
  engine: Engine;
  cleanup(): Promise<void>;
}

export const job = (workflow: Workflow): EngineJob => ({ id: crypto.randomUUID(), account_id: 'acct-suite', workflow });

// Engine servers keep their caches across jobs (and across test runs when they
// are long-lived), so every workflow gets a colour of its own: a repeated one
// would be served from cache and never emit `executing`.
let next = Math.floor(Math.random() * 0xffffff);
export function uniqueColor(): number {
  next = (next + 0x0a0b0c) % 0x1000000;
  return next;
}

export const rgbOf = (color: number): number[] => [(color >> 16) & 0xff, (color >> 8) & 0xff, color & 0xff];

/** EmptyImage(width x height, color) -> ImageInvert -> SaveImage, as nodes '1', '2', '3'. */
export function invertChain(color: number, width = 4, height = 2, batch_size = 1): Workflow {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width, height, batch_size, color } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'suite' } },
  };
}

/** Decodes a PNG and checks its size; returns its pixels as 0..255 RGB triples. */
export function pixelsOf(bytes: Uint8Array, width: number, height: number): number[][] {
  const png = decodePng(bytes);
  expect([png.width, png.height]).toEqual([width, height]);
  const out: number[][] = [];
  for (let p = 0; p < width * height; p++) {
    const at = p * png.channels;
    out.push([0, 1, 2].map((c) => Math.round(png.data[at + c] * 255)));
  }
  return out;
}

/**
 * Every pixel within 1 of `rgb`: the reference truncates floats to bytes
 * where the local engine rounds, so k/255 may come out one lower there.
 */
export function expectAllNear(pixels: number[][], rgb: number[]): void {
  for (const px of pixels) {
    const off = px.map((v, c) => Math.abs(v - rgb[c]));
    expect({ px, close: off.every((d) => d <= 1) }).toEqual({ px, close: true });
  }
}

/** The promise's rejection, or undefined when it resolved. */
export const rejectionOf = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

/** A worker engine may still be starting its servers: wait (bounded) for ready. */
export async function waitUntilReady(engine: Engine, timeoutMs = 20_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  let state = engine.readiness().state;
  while (state !== 'ready' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    state = engine.readiness().state;
  }
  return state;
}
