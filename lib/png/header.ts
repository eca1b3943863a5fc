// IHDR: what the spec allows per colour type and bit depth, the dimension
// and memory limits that stop decompression bombs before any inflating, and
// the layout of the (possibly Adam7-interlaced) scanlines the image data must
// contain.
import { PngError, readChunks } from './chunks.ts';

export interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlaced: boolean;
}

export interface PngLimits {
  /** Largest width or height accepted (default 16384). */
  maxSide?: number;
  /** Largest width * height accepted (default 64 megapixels). */
  maxPixels?: number;
  /**
   * Most bytes the decode may hold at once (decodeBytes: the inflated
   * scanlines and the decoded pixels, Float32 or for decodePngRgba8 bytes),
   * checked before anything is inflated
   * (default: no bound beyond the size limits). A 16-bit image of the largest
   * size compresses to a few hundred kilobytes and decodes to gigabytes.
   */
  maxBytes?: number;
}

export const DEFAULT_LIMITS: Required<PngLimits> = { maxSide: 16384, maxPixels: 64 * 1024 * 1024, maxBytes: Infinity };

const DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
export const SAMPLES_PER_PIXEL: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

export function parseHeader(data: Uint8Array, limits: PngLimits = {}): PngHeader {
  if (data.length !== 13) throw new PngError(`PNG IHDR has length ${data.length}, expected 13`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = view.getUint32(0);
  const height = view.getUint32(4);
  const [bitDepth, colorType, compression, filter, interlace] = data.subarray(8);
  if (width === 0 || height === 0) throw new PngError(`PNG has an empty size ${width}x${height}`);
  const maxSide = limits.maxSide ?? DEFAULT_LIMITS.maxSide;
  const maxPixels = limits.maxPixels ?? DEFAULT_LIMITS.maxPixels;
  if (width > maxSide || height > maxSide || width * height > maxPixels) {
    throw new PngError(`PNG is ${width}x${height}, beyond the limit of ${maxSide} per side and ${maxPixels} pixels`);
  }
  if (!(colorType in DEPTHS)) throw new PngError(`PNG colour type ${colorType} is not valid`);
  if (!DEPTHS[colorType].includes(bitDepth)) {
    throw new PngError(`PNG bit depth ${bitDepth} is not allowed for colour type ${colorType}`);
  }
  if (compression !== 0) throw new PngError(`PNG compression method ${compression} is unsupported`);
  if (filter !== 0) throw new PngError(`PNG filter method ${filter} is unsupported`);
  if (interlace > 1) throw new PngError(`PNG interlace method ${interlace} is unsupported`);
  return { width, height, bitDepth, colorType, interlaced: interlace === 1 };
}

/** A PNG file's header, checked as the decoder checks it, without reading past IHDR. */
export function readPngHeader(bytes: Uint8Array, limits: PngLimits = {}): PngHeader {
  const first = readChunks(bytes).next();
  if (first.done || first.value.type !== 'IHDR') throw new PngError('PNG must start with IHDR');
  return parseHeader(first.value.data, limits);
}

/** One reduced image: pixels (x0 + i*dx, y0 + j*dy) of the full image. */
export interface Pass {
  x0: number;
  y0: number;
  dx: number;
  dy: number;
  width: number;
  height: number;
}

const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/** The passes in stored order; empty passes (tiny images) are left out, as they have no bytes. */
export function passesOf(h: PngHeader): Pass[] {
  const layout = h.interlaced ? ADAM7 : [[0, 0, 1, 1]];
  return layout
    .map(([x0, y0, dx, dy]) => ({
      x0,
      y0,
      dx,
      dy,
      width: h.width > x0 ? Math.ceil((h.width - x0) / dx) : 0,
      height: h.height > y0 ? Math.ceil((h.height - y0) / dy) : 0,
    }))
    .filter((p) => p.width > 0 && p.height > 0);
}

export function bitsPerPixel(h: PngHeader): number {
  return SAMPLES_PER_PIXEL[h.colorType] * h.bitDepth;
}

/** Bytes of one scanline of `width` pixels, without its filter-type byte. */
export function rowBytes(h: PngHeader, width: number): number {
  return Math.ceil((width * bitsPerPixel(h)) / 8);
}

/** Exactly how many bytes the inflated image data must have. */
export function rawSize(h: PngHeader): number {
  return passesOf(h).reduce((n, p) => n + p.height * (1 + rowBytes(h, p.width)), 0);
}

/** What decoding holds at its peak: the inflated scanlines and `samples` values per pixel (Float32 by default), alive together. */
export function decodeBytes(h: PngHeader, samples: number, bytesPerSample = 4): number {
  return rawSize(h) + h.width * h.height * samples * bytesPerSample;
}
