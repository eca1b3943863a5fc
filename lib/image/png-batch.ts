// Bridges PNG bytes and the IMAGE value: RGB goes into an ImageBatch of one,
// alpha comes out separately as a mask in the reference's sense (1 - alpha).

import { PngError } from '../png/chunks.ts';
import { decodePng } from '../png/decode.ts';
import { encodePng, type PngEncodeOptions } from '../png/encode.ts';
import type { PngLimits } from '../png/header.ts';
import { createImageBatch, type ImageBatch } from './batch.ts';

export interface PngImage {
  image: ImageBatch;
  /** width * height values, 1 - alpha; null when the PNG has no alpha. */
  mask: Float32Array | null;
  text: Record<string, string>;
}

export function pngToImageBatch(bytes: Uint8Array, limits?: PngLimits): PngImage {
  const png = decodePng(bytes, limits);
  const image = createImageBatch(png.width, png.height, 1);
  const pixels = png.width * png.height;
  if (png.channels === 3) {
    image.data.set(png.data);
    return { image, mask: null, text: png.text };
  }
  const mask = new Float32Array(pixels);
  for (let p = 0; p < pixels; p++) {
    image.data[p * 3] = png.data[p * 4];
    image.data[p * 3 + 1] = png.data[p * 4 + 1];
    image.data[p * 3 + 2] = png.data[p * 4 + 2];
    mask[p] = 1 - png.data[p * 4 + 3];
  }
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
