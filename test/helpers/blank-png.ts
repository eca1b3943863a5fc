// Large blank PNGs for the memory-budget tests, built without holding their
// pixels: one zero scanline deflated over and over as it streams (Node's
// zlib), so the 16-bit RGBA 16384x4096 image, 512 MiB of scanlines,
// comes out at about half a megabyte. Built once per size and shared.
import { createDeflate } from 'node:zlib';
import { chunk } from '../local-engine/png-fixtures.ts';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const SAMPLES = { 0: 1, 2: 3, 4: 2, 6: 4 } as const;

export interface BlankPng {
  width: number;
  height: number;
  bitDepth: 8 | 16;
  colorType: keyof typeof SAMPLES;
}

/** The IHDR chunk's data for this size and format. */
export function ihdrOf({ width, height, bitDepth, colorType }: BlankPng): Buffer {
  const b = Buffer.alloc(13);
  b.writeUInt32BE(width, 0);
  b.writeUInt32BE(height, 4);
  b.set([bitDepth, colorType, 0, 0, 0], 8);
  return b;
}

/** Signature, IHDR, then `rest` chunks as given. */
export function pngOf(spec: BlankPng, rest: Buffer[]): Uint8Array {
  return new Uint8Array(Buffer.concat([SIGNATURE, chunk('IHDR', ihdrOf(spec)), ...rest]));
}

async function deflatedZeros(rows: number, rowBytes: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (c: Buffer) => parts.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  // Filter byte 0 (None) and zero samples: the same row every time.
  const row = Buffer.alloc(rowBytes);
  for (let y = 0; y < rows; y++) if (!deflate.write(row)) await new Promise((r) => deflate.once('drain', r));
  deflate.end();
  await ended;
  return Buffer.concat(parts);
}

const built = new Map<string, Promise<Uint8Array>>();

/** A valid, all-zero PNG of this size and format (transparent black when it has alpha). */
export function blankPng(spec: BlankPng): Promise<Uint8Array> {
  const key = JSON.stringify(spec);
  let png = built.get(key);
  if (!png) {
    const rowBytes = 1 + (spec.width * SAMPLES[spec.colorType] * spec.bitDepth) / 8;
    png = deflatedZeros(spec.height, rowBytes).then((z) => {
      const idat = [];
      // 1 MiB IDAT chunks, as encoders commonly split them.
      for (let at = 0; at < z.length; at += 1 << 20) idat.push(chunk('IDAT', z.subarray(at, at + (1 << 20))));
      return pngOf(spec, [...idat, chunk('IEND', new Uint8Array(0))]);
    });
    built.set(key, png);
  }
  return png;
}

/** The image: 16-bit RGBA, 16384x4096, about 500 KB, 1.5 GiB to decode as floats. */
export const HUGE_16BIT: BlankPng = { width: 16384, height: 4096, bitDepth: 16, colorType: 6 };
