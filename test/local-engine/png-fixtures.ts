// Builds PNG fixtures for the decoder tests with Node's own zlib and crc32, so
// the codec under test is checked against an independent writer: any colour
// type and bit depth, every filter type (cycled per row), Adam7, PLTE, tRNS.
import { crc32, deflateSync } from 'node:zlib';

export interface Fixture {
  width: number;
  height: number;
  colorType: 0 | 2 | 3 | 4 | 6;
  bitDepth: 1 | 2 | 4 | 8 | 16;
  interlaced?: boolean;
  /** Raw sample values, width * height * samples-per-pixel, row-major. */
  samples: number[];
  plte?: number[];
  trns?: number[];
  /** Extra chunks inserted before IDAT, e.g. ancillary ones the decoder must skip. */
  extra?: { type: string; data: Uint8Array }[];
}

export const SPP = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

export function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

function packRow(values: number[], depth: number): number[] {
  if (depth === 16) return values.flatMap((v) => [v >> 8, v & 255]);
  if (depth === 8) return values;
  const out = new Array(Math.ceil((values.length * depth) / 8)).fill(0);
  values.forEach((v, i) => {
    const bit = i * depth;
    out[bit >> 3] |= v << (8 - depth - (bit & 7));
  });
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function filterRow(type: number, cur: number[], prev: number[], bpp: number): number[] {
  return cur.map((x, i) => {
    const a = i >= bpp ? cur[i - bpp] : 0;
    const b = prev[i] ?? 0;
    const c = i >= bpp ? (prev[i - bpp] ?? 0) : 0;
    const pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][type];
    return (x - pred) & 255;
  });
}

function ihdr(f: Fixture): Buffer {
  const b = Buffer.alloc(13);
  b.writeUInt32BE(f.width, 0);
  b.writeUInt32BE(f.height, 4);
  b.set([f.bitDepth, f.colorType, 0, 0, f.interlaced ? 1 : 0], 8);
  return b;
}

/** The filtered, uncompressed scanlines of all passes. */
export function scanlines(f: Fixture): Buffer {
  const spp = SPP[f.colorType];
  const bpp = Math.max(1, (spp * f.bitDepth) >> 3);
  const out: number[] = [];
  let rowIndex = 0;
  for (const [x0, y0, dx, dy] of f.interlaced ? ADAM7 : [[0, 0, 1, 1]]) {
    let prev: number[] = [];
    for (let y = y0; y < f.height; y += dy) {
      const values: number[] = [];
      for (let x = x0; x < f.width; x += dx) values.push(...f.samples.slice((y * f.width + x) * spp, (y * f.width + x + 1) * spp));
      if (values.length === 0) break;
      const row = packRow(values, f.bitDepth);
      const type = rowIndex++ % 5;
      out.push(type, ...filterRow(type, row, prev, bpp));
      prev = row;
    }
  }
  return Buffer.from(out);
}

export function buildPng(f: Fixture, idatParts = 1): Buffer {
  const z = deflateSync(scanlines(f));
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr(f))];
  if (f.plte) parts.push(chunk('PLTE', Uint8Array.from(f.plte)));
  if (f.trns) parts.push(chunk('tRNS', Uint8Array.from(f.trns)));
  for (const e of f.extra ?? []) parts.push(chunk(e.type, e.data));
  const step = Math.ceil(z.length / idatParts);
  for (let at = 0; at < z.length; at += step) parts.push(chunk('IDAT', z.subarray(at, at + step)));
  parts.push(chunk('IEND', new Uint8Array(0)));
  return Buffer.concat(parts);
}

/** What the decoder should produce: RGB(A) floats, alpha when the type has it or tRNS is present. */
export function expected(f: Fixture): { channels: 3 | 4; data: number[] } {
  const max = 2 ** f.bitDepth - 1;
  const spp = SPP[f.colorType];
  const channels = f.colorType === 4 || f.colorType === 6 || f.trns ? 4 : 3;
  const trns16 = f.trns && f.colorType !== 3 ? Buffer.from(f.trns) : null;
  const data: number[] = [];
  for (let p = 0; p < f.width * f.height; p++) {
    const s = f.samples.slice(p * spp, (p + 1) * spp);
    let rgba: number[];
    if (f.colorType === 3) {
      const i = s[0];
      rgba = [f.plte![i * 3] / 255, f.plte![i * 3 + 1] / 255, f.plte![i * 3 + 2] / 255, (f.trns?.[i] ?? 255) / 255];
    } else if (f.colorType === 0 || f.colorType === 4) {
      const transparent = trns16 && s[0] === trns16.readUInt16BE(0);
      rgba = [s[0] / max, s[0] / max, s[0] / max, f.colorType === 4 ? s[1] / max : transparent ? 0 : 1];
    } else {
      const transparent = trns16 && s.every((v, k) => v === trns16.readUInt16BE(2 * k));
      rgba = [s[0] / max, s[1] / max, s[2] / max, f.colorType === 6 ? s[3] / max : transparent ? 0 : 1];
    }
    data.push(...rgba.slice(0, channels));
  }
  return { channels, data };
}

/** Deterministic pseudo-random samples (xorshift), so failures reproduce. */
export function randomSamples(count: number, max: number, seed = 1): number[] {
  let x = (seed * 2654435761) >>> 0 || 1;
  return Array.from({ length: count }, () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % (max + 1);
  });
}
