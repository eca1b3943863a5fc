// PNG decoder: every colour type and bit depth of the spec, all filters,
// Adam7, tRNS, CRCs checked, dimension and memory limits enforced before
// inflating.
// Ancillary chunks other than tRNS and text are skipped (gamma and colour
// profiles are ignored, as the reference's loader ignores them).
import { PngError, PngMemoryError, readChunks } from './chunks.ts';
import { bitsPerPixel, decodeBytes, type PngHeader, type PngLimits, parseHeader, passesOf, rawSize, rowBytes } from './header.ts';
import { type BoundedInflater, createBoundedInflater } from './inflate.ts';
import { paletteFloats, type Transparency, writePassPixels } from './pixels.ts';
import { parseTextChunk } from './text.ts';
import { unfilterRows } from './unfilter.ts';

export interface DecodedPng {
  width: number;
  height: number;
  /** 4 when the image has alpha (colour types 4 and 6, or a tRNS chunk). */
  channels: 3 | 4;
  /**
   * width * height * channels floats in 0..1, row-major, RGB(A) interleaved;
   * RGB only (3 per pixel) when decoded with `alphaPlane`.
   */
  data: Float32Array;
  /** With `alphaPlane` and channels 4: the alpha values, width * height, apart from `data`. */
  alpha?: Float32Array;
  bitDepth: number;
  colorType: number;
  /** tEXt and uncompressed iTXt entries. */
  text: Record<string, string>;
}

function readTransparency(h: PngHeader, data: Uint8Array): Transparency | null {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (h.colorType === 3) return { paletteAlpha: data };
  if (h.colorType === 0 && data.length >= 2) return { gray: v.getUint16(0) };
  if (h.colorType === 2 && data.length >= 6) return { rgb: [v.getUint16(0), v.getUint16(2), v.getUint16(4)] };
  return null; // not allowed for types with an alpha channel: ignore
}

export interface PngDecodeOptions extends PngLimits {
  /**
   * Alpha in a plane of its own (DecodedPng.alpha) and RGB in `data`, for
   * callers that keep them apart (an IMAGE and its MASK) and would otherwise
   * copy every pixel once more.
   */
  alphaPlane?: boolean;
}

/** A PNG as 8-bit RGBA, whatever it holds (no alpha: opaque), for callers that re-encode it. */
export interface DecodedPngRgba8 {
  width: number;
  height: number;
  /** Whether the image has alpha (colour types 4 and 6, or a tRNS chunk). */
  hasAlpha: boolean;
  /** width * height * 4 samples 0..255 (rounded from deeper ones), row-major. */
  data: Uint8Array;
  bitDepth: number;
  colorType: number;
  text: Record<string, string>;
}

/** How the caller wants the pixels: every pixel RGBA or the image's own channels, alpha apart, bytes per sample. */
interface Layout {
  rgba: boolean;
  alphaPlane: boolean;
  sampleBytes: 1 | 4;
}

const channelsOf = (h: PngHeader, trns: Transparency | null): 3 | 4 => (h.colorType === 4 || h.colorType === 6 || trns ? 4 : 3);

/** Refuses, before anything is inflated, an image whose decode would hold more than `maxBytes`. */
function checkMemory(h: PngHeader, samples: number, layout: Layout, maxBytes = Infinity): void {
  const bytes = decodeBytes(h, samples, layout.sampleBytes);
  if (bytes > maxBytes) throw new PngMemoryError(h.width, h.height, bytes, maxBytes);
}

export function decodePng(bytes: Uint8Array, options: PngDecodeOptions = {}): DecodedPng {
  const png = decode(bytes, options, { rgba: false, alphaPlane: options.alphaPlane === true, sampleBytes: 4 });
  const { width, height, bitDepth, colorType } = png.header;
  const data = png.data as Float32Array;
  return {
    width,
    height,
    channels: png.channels,
    data,
    ...(png.alpha ? { alpha: png.alpha as Float32Array } : {}),
    bitDepth,
    colorType,
    text: png.text,
  };
}

/** Decodes to 8-bit RGBA: a quarter of the floats' memory, for callers that only re-encode. */
export function decodePngRgba8(bytes: Uint8Array, limits: PngLimits = {}): DecodedPngRgba8 {
  const png = decode(bytes, limits, { rgba: true, alphaPlane: false, sampleBytes: 1 });
  const { width, height, bitDepth, colorType } = png.header;
  return { width, height, hasAlpha: png.channels === 4, data: png.data as Uint8Array, bitDepth, colorType, text: png.text };
}

function decode(bytes: Uint8Array, limits: PngLimits, layout: Layout) {
  let header: PngHeader | null = null;
  let plte: Uint8Array | null = null;
  let trns: Transparency | null = null;
  let inflater: BoundedInflater | null = null;
  const text: Record<string, string> = {};
  const samples = (h: PngHeader, t: Transparency | null) => (layout.rgba ? 4 : channelsOf(h, t));
  for (const { type, data } of readChunks(bytes)) {
    if (!header) {
      if (type !== 'IHDR') throw new PngError(`PNG must start with IHDR, found ${type}`);
      header = parseHeader(data, limits);
      // The fewest channels the header allows: a huge image is refused before its other chunks are read.
      checkMemory(header, samples(header, null), layout, limits.maxBytes);
      continue;
    }
    if (type === 'IDAT') {
      if (header.colorType === 3 && !plte) throw new PngError('PNG palette image has no PLTE before IDAT');
      if (!inflater) {
        // tRNS (before the first IDAT) may have added an alpha channel.
        checkMemory(header, samples(header, trns), layout, limits.maxBytes);
        inflater = createBoundedInflater(rawSize(header));
      }
      inflater.push(data);
    } else if (type === 'PLTE' && !inflater) {
      if (data.length === 0 || data.length % 3 !== 0 || data.length > 768) {
        throw new PngError(`PNG PLTE has an invalid length ${data.length}`);
      }
      plte = data;
    } else if (type === 'tRNS' && !inflater) {
      trns = readTransparency(header, data);
    } else if (type === 'tEXt' || type === 'iTXt') {
      const entry = parseTextChunk(type, data);
      if (entry) text[entry[0]] = entry[1];
    } else if (type === 'IHDR') {
      throw new PngError('PNG has more than one IHDR');
    } else if (type !== 'IEND' && type !== 'PLTE' && type !== 'tRNS' && type.charCodeAt(0) < 97) {
      // An unknown critical chunk (uppercase first letter) changes how the image must be read.
      throw new PngError(`PNG uses an unsupported critical chunk ${type}`);
    }
  }
  if (!header) throw new PngError('PNG has no IHDR');
  if (!inflater) throw new PngError('PNG has no image data (IDAT)');
  const raw = inflater.finish();
  const channels = channelsOf(header, trns);
  const pixels = header.width * header.height;
  const make = (n: number) => (layout.sampleBytes === 1 ? new Uint8Array(n) : new Float32Array(n));
  const alpha = layout.alphaPlane && channels === 4 ? make(pixels) : null;
  const out = make(pixels * (layout.rgba ? 4 : alpha ? 3 : channels));
  const palette = header.colorType === 3 ? paletteFloats(plte!, trns?.paletteAlpha) : null;
  const bpp = Math.max(1, bitsPerPixel(header) >> 3);
  let offset = 0;
  for (const pass of passesOf(header)) {
    const stride = rowBytes(header, pass.width);
    unfilterRows(raw, offset, pass.height, stride, bpp);
    writePassPixels(raw, offset, stride, pass, { header, palette, trns, channels: layout.rgba ? 4 : channels, out, alpha });
    offset += pass.height * (stride + 1);
  }
  return { header, channels, data: out, alpha, text };
}
