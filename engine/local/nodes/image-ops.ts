// Pixel math shared by the image nodes, kept apart from their declarations
// so it can be tested on tiny known images: input checks, crop, blend.
import { createImageBatch, type ImageBatch, isImageBatch } from '../../../lib/image/batch.ts';

export function requireImage(value: unknown, name: string): ImageBatch {
  if (!isImageBatch(value)) throw new TypeError(`input "${name}" is not an IMAGE`);
  return value;
}

export function requireInt(value: unknown, name: string): number {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new TypeError(`input "${name}" is not a number: ${String(value)}`);
  return Math.trunc(n);
}

/** Python's round(): halves go to the even neighbour, so sizes match the reference's. */
export function pyRound(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The rectangle [x, x+width) x [y, y+height) of every image, clipped to the image. */
export function cropImage(src: ImageBatch, x: number, y: number, width: number, height: number): ImageBatch {
  // Like the reference: the origin is kept inside the image, the far edge is clipped.
  const x0 = Math.max(0, Math.min(x, src.width - 1));
  const y0 = Math.max(0, Math.min(y, src.height - 1));
  const w = Math.max(0, Math.min(x0 + width, src.width) - x0);
  const h = Math.max(0, Math.min(y0 + height, src.height) - y0);
  const out = createImageBatch(w, h, src.count);
  for (let b = 0; b < src.count; b++) {
    for (let row = 0; row < h; row++) {
      const from = ((b * src.height + y0 + row) * src.width + x0) * 3;
      out.data.set(src.data.subarray(from, from + w * 3), (b * h + row) * w * 3);
    }
  }
  return out;
}

export const BLEND_MODES = ['normal', 'multiply', 'screen', 'overlay', 'soft_light', 'difference'] as const;
export type BlendMode = (typeof BLEND_MODES)[number];

const g = (x: number): number => (x <= 0.25 ? ((16 * x - 12) * x + 4) * x : Math.sqrt(x));

/** The reference's ImageBlend.blend_mode for one value of each image. */
export function blendValue(a: number, b: number, mode: BlendMode): number {
  switch (mode) {
    case 'normal':
      return b;
    case 'multiply':
      return a * b;
    case 'screen':
      return 1 - (1 - a) * (1 - b);
    case 'overlay':
      return a <= 0.5 ? 2 * a * b : 1 - 2 * (1 - a) * (1 - b);
    case 'soft_light':
      return b <= 0.5 ? a - (1 - 2 * b) * a * (1 - a) : a + (2 * b - 1) * (g(a) - a);
    case 'difference':
      return a - b;
  }
}

/**
 * image1 * (1 - factor) + mode(image1, image2) * factor, clamped to 0..1.
 * image2 must already have image1's size; a shorter batch repeats (a batch of
 * one broadcasts, as in the reference).
 */
export function blendImages(image1: ImageBatch, image2: ImageBatch, factor: number, mode: BlendMode): ImageBatch {
  const out = createImageBatch(image1.width, image1.height, image1.count);
  const per = image1.width * image1.height * 3;
  for (let b = 0; b < image1.count; b++) {
    const o2 = (b % image2.count) * per;
    for (let i = 0; i < per; i++) {
      const a = image1.data[b * per + i];
      const v = a * (1 - factor) + blendValue(a, image2.data[o2 + i], mode) * factor;
      out.data[b * per + i] = Math.min(Math.max(v, 0), 1);
    }
  }
  return out;
}
