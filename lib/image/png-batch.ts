// Bridges PNG bytes and the IMAGE value: RGB goes into an ImageBatch of one,
// alpha comes out separately as a mask in the reference's sense (1 - alpha).

import { PngError } from '../png/chunks.ts';
import { decodePng } from '../png/decode.ts';
import { encodePng, type PngEncodeOptions } from '../png/encode.ts';
import type { PngLimits } from '../png/header.ts';
import type { ImageBatch } from './batch.ts';

export interface PngImage {
  image: ImageBatch;
  /** width * height values, 1 - alpha; null when the PNG has no alpha. */
  mask: Float32Array | null;
  text: Record<string, string>;
}

/**
 * The decoded RGB floats are the IMAGE's data as they are and the alpha plane
 * becomes the mask in place, so nothing is copied: with `limits.maxBytes`,
 * the decode's own check bounds all this allocates.
 */
export function pngToImageBatch(bytes: Uint8Array, limits?: PngLimits): PngImage {
  const png = decodePng(bytes, { ...limits, alphaPlane: true });
  const image: ImageBatch = { width: png.width, height: png.height, count: 1, data: png.data };
  const mask = png.alpha ?? null;
  if (mask) for (let p = 0; p < mask.length; p++) mask[p] = 1 - mask[p];
  return { image, mask, text: png.text };
}

export interface ImageBatchPngOptions extends PngEncodeOptions {
  /** width * height values (1 - alpha); when given the PNG is RGBA. */
  mask?: Float32Array | null;
}

/** Encodes image `index` of the batch as an 8-bit PNG. */
export function imageBatchToPng(batch: ImageBatch, index = 0, options: ImageBatchPngOptions = {}): Uint8Array {
  const { width, height } = batch;
  const pixels = width * height;
  if (index < 0 || index >= batch.count) throw new PngError(`image ${index} is not in a batch of ${batch.count}`);
  const rgb = batch.data.subarray(index * pixels * 3, (index + 1) * pixels * 3);
  const mask = options.mask ?? null;
  if (!mask) return encodePng({ width, height, channels: 3, data: rgb }, options);
  if (mask.length !== pixels) throw new PngError(`mask has ${mask.length} values, expected ${pixels}`);
  const rgba = new Float32Array(pixels * 4);
  for (let p = 0; p < pixels; p++) {
    rgba[p * 4] = rgb[p * 3];
    rgba[p * 4 + 1] = rgb[p * 3 + 1];
    rgba[p * 4 + 2] = rgb[p * 3 + 2];
    rgba[p * 4 + 3] = 1 - mask[p];
  }
  return encodePng({ width, height, channels: 4, data: rgba }, options);
}
