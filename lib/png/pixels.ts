// Turns unfiltered scanlines of any colour type and bit depth into RGB(A)
// floats in 0..1 (or bytes 0..255), placing each pass's pixels where Adam7
// says they belong.
import type { Pass, PngHeader } from './header.ts';

/** tRNS in decoded form: a transparent gray or RGB sample value, or palette alphas. */
export interface Transparency {
  gray?: number;
  rgb?: [number, number, number];
  paletteAlpha?: Uint8Array;
}

export interface PixelTarget {
  header: PngHeader;
  /** Palette as RGBA floats, 4 per entry (colour type 3 only). */
  palette: Float32Array | null;
  trns: Transparency | null;
  /** Samples per pixel in `out` (4 for an image without alpha: opaque). */
  channels: 3 | 4;
  /** Floats 0..1, or bytes 0..255 (rounded) when a Uint8Array. */
  out: Float32Array | Uint8Array;
  /** When given (channels 4), alpha goes here, one value per pixel, and `out` holds RGB only. */
  alpha: Float32Array | Uint8Array | null;
}

const toByte = (v: number) => (v > 0 ? (v < 1 ? Math.round(v * 255) : 255) : 0);

function sampleAt(raw: Uint8Array, row: number, i: number, depth: number): number {
  if (depth === 8) return raw[row + i];
  if (depth === 16) return (raw[row + 2 * i] << 8) | raw[row + 2 * i + 1];
  const bit = i * depth;
  return (raw[row + (bit >> 3)] >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
}

/** Builds the float palette: entries past the tRNS table are opaque. */
export function paletteFloats(plte: Uint8Array, alpha: Uint8Array | undefined): Float32Array {
  const entries = plte.length / 3;
  const out = new Float32Array(256 * 4);
  for (let i = 0; i < 256; i++) out[i * 4 + 3] = 1; // out-of-range indices render opaque black, like browsers
  for (let i = 0; i < entries; i++) {
    out[i * 4] = plte[i * 3] / 255;
    out[i * 4 + 1] = plte[i * 3 + 1] / 255;
    out[i * 4 + 2] = plte[i * 3 + 2] / 255;
    out[i * 4 + 3] = alpha && i < alpha.length ? alpha[i] / 255 : 1;
  }
  return out;
}

/** Writes one pass's rows (already unfiltered; each row has its filter byte first). */
export function writePassPixels(raw: Uint8Array, offset: number, stride: number, pass: Pass, t: PixelTarget): void {
  const { width, bitDepth: depth, colorType } = t.header;
  const scale = 1 / ((1 << depth) - 1);
  const { channels, out, trns, palette, alpha } = t;
  const step = alpha ? 3 : channels;
  const bytes = out instanceof Uint8Array;
  for (let y = 0; y < pass.height; y++) {
    const row = offset + y * (stride + 1) + 1;
    const outRow = (pass.y0 + y * pass.dy) * width;
    for (let x = 0; x < pass.width; x++) {
      const at = outRow + pass.x0 + x * pass.dx;
      const o = at * step;
      let r: number,
        g: number,
        b: number,
        a = 1;
      if (colorType === 3) {
        const p = sampleAt(raw, row, x, depth) * 4;
        r = palette![p];
        g = palette![p + 1];
        b = palette![p + 2];
        a = palette![p + 3];
      } else if (colorType === 0 || colorType === 4) {
        const s = sampleAt(raw, row, colorType === 0 ? x : 2 * x, depth);
        r = g = b = s * scale;
        if (colorType === 4) a = sampleAt(raw, row, 2 * x + 1, depth) * scale;
        else if (trns?.gray === s) a = 0;
      } else {
        const n = colorType === 2 ? 3 : 4;
        const sr = sampleAt(raw, row, n * x, depth);
        const sg = sampleAt(raw, row, n * x + 1, depth);
        const sb = sampleAt(raw, row, n * x + 2, depth);
        r = sr * scale;
        g = sg * scale;
        b = sb * scale;
        if (n === 4) a = sampleAt(raw, row, n * x + 3, depth) * scale;
        else if (trns?.rgb && trns.rgb[0] === sr && trns.rgb[1] === sg && trns.rgb[2] === sb) a = 0;
      }
      if (bytes) {
        r = toByte(r);
        g = toByte(g);
        b = toByte(b);
        a = toByte(a);
      }
      out[o] = r;
      out[o + 1] = g;
      out[o + 2] = b;
      if (alpha) alpha[at] = a;
      else if (channels === 4) out[o + 3] = a;
    }
  }
}
