// PNG decoder: every colour type and bit depth of the spec, all filters,
// Adam7, tRNS, CRCs checked, dimension limits enforced before inflating.
// Ancillary chunks other than tRNS and text are skipped (gamma and colour
// profiles are ignored, as the reference's loader ignores them).
import { PngError, readChunks } from './chunks.ts';
import { bitsPerPixel, type PngHeader, type PngLimits, parseHeader, passesOf, rawSize, rowBytes } from './header.ts';
import { type BoundedInflater, createBoundedInflater } from './inflate.ts';
import { paletteFloats, type Transparency, writePassPixels } from './pixels.ts';
import { parseTextChunk } from './text.ts';
import { unfilterRows } from './unfilter.ts';

export interface DecodedPng {
  width: number;
  height: number;
  /** 4 when the image has alpha (colour types 4 and 6, or a tRNS chunk). */
  channels: 3 | 4;
  /** width * height * channels floats in 0..1, row-major, RGB(A) interleaved. */
  data: Float32Array;
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

export function decodePng(bytes: Uint8Array, limits: PngLimits = {}): DecodedPng {
  let header: PngHeader | null = null;
  let plte: Uint8Array | null = null;
  let trns: Transparency | null = null;
  let inflater: BoundedInflater | null = null;
  const text: Record<string, string> = {};
  for (const { type, data } of readChunks(bytes)) {
    if (!header) {
      if (type !== 'IHDR') throw new PngError(`PNG must start with IHDR, found ${type}`);
      header = parseHeader(data, limits);
      continue;
    }
    if (type === 'IDAT') {
      if (header.colorType === 3 && !plte) throw new PngError('PNG palette image has no PLTE before IDAT');
      inflater ??= createBoundedInflater(rawSize(header));
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
  const channels = header.colorType === 4 || header.colorType === 6 || trns ? 4 : 3;
  const out = new Float32Array(header.width * header.height * channels);
  const palette = header.colorType === 3 ? paletteFloats(plte!, trns?.paletteAlpha) : null;
  const bpp = Math.max(1, bitsPerPixel(header) >> 3);
  let offset = 0;
  for (const pass of passesOf(header)) {
    const stride = rowBytes(header, pass.width);
    unfilterRows(raw, offset, pass.height, stride, bpp);
    writePassPixels(raw, offset, stride, pass, { header, palette, trns, channels, out });
    offset += pass.height * (stride + 1);
  }
  const { width, height, bitDepth, colorType } = header;
  return { width, height, channels, data: out, bitDepth, colorType, text };
}
