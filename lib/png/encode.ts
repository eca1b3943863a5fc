// PNG encoder: 8-bit RGB or RGBA, non-interlaced, adaptive per-row filters,
// zlib level 6, optional text chunks (written before the image data, where
// the reference's Pillow writer puts them).
import { zlibSync } from 'fflate';
import { concatBytes } from '../bytes.ts';
import { PNG_SIGNATURE, PngError, writeChunk } from './chunks.ts';
import { filterRows } from './filter.ts';
import { textChunk } from './text.ts';

export interface PngEncodeInput {
  width: number;
  height: number;
  channels: 3 | 4;
  /** width * height * channels samples: bytes, or floats in 0..1 (clamped, rounded). */
  data: Uint8Array | Uint8ClampedArray | Float32Array;
}

export interface PngEncodeOptions {
  /** Key/value text entries, e.g. { prompt: JSON, workflow: JSON }. */
  text?: Record<string, string>;
  /** zlib level 0-9; default 6. */
  level?: number;
}

// Big IDATs are legal, but splitting keeps every chunk of a modest size for streaming readers.
const IDAT_SIZE = 1 << 20;

function toBytes(data: PngEncodeInput['data']): Uint8Array {
  if (!(data instanceof Float32Array)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const out = new Uint8Array(data.length);
  // Rounding (the reference truncates) keeps k/255 floats exact through encode + decode.
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    out[i] = v > 0 ? (v < 1 ? Math.round(v * 255) : 255) : 0;
  }
  return out;
}

export function encodePng(image: PngEncodeInput, options: PngEncodeOptions = {}): Uint8Array {
  const { width, height, channels } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new PngError(`cannot encode a PNG of size ${width}x${height}`);
  }
  if (image.data.length !== width * height * channels) {
    throw new PngError(`PNG data has ${image.data.length} samples, expected ${width * height * channels}`);
  }
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, channels === 4 ? 6 : 2, 0, 0, 0], 8);
  const stride = width * channels;
  const filtered = new Uint8Array(height * (stride + 1));
  filterRows(toBytes(image.data), height, stride, channels, filtered);
  const compressed = zlibSync(filtered, { level: (options.level ?? 6) as 6 });
  const parts = [PNG_SIGNATURE, writeChunk('IHDR', ihdr)];
  for (const [key, value] of Object.entries(options.text ?? {})) parts.push(textChunk(key, value));
  for (let at = 0; at < compressed.length; at += IDAT_SIZE) {
    parts.push(writeChunk('IDAT', compressed.subarray(at, at + IDAT_SIZE)));
  }
  parts.push(writeChunk('IEND', new Uint8Array(0)));
  return concatBytes(parts);
}
