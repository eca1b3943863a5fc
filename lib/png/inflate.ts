// Inflates the IDAT stream into a buffer of exactly the size IHDR implies.
// Data is pushed in small slices so a decompression bomb is stopped after at
// most one slice's worth of output past the limit, not after inflating it all.
import { Unzlib } from 'fflate';
import { PngError } from './chunks.ts';

// Deflate expands at most ~1032:1, so one slice can overshoot by ~4 MB at worst.
const SLICE = 4 * 1024;

export interface BoundedInflater {
  push(compressed: Uint8Array): void;
  /** Ends the stream; throws when it is cut short or the data come out too small. */
  finish(): Uint8Array;
}

export function createBoundedInflater(expected: number): BoundedInflater {
  const out = new Uint8Array(expected);
  let written = 0;
  // More data than the scanlines need is ignored (as libpng does), but we
  // stop inflating at once rather than spend time on what would be dropped.
  let full = false;
  const unzlib = new Unzlib((chunk) => {
    const room = expected - written;
    if (chunk.length >= room) full = true;
    out.set(chunk.length > room ? chunk.subarray(0, room) : chunk, written);
    written += Math.min(room, chunk.length);
  });
  const guarded = (data: Uint8Array, final: boolean): void => {
    try {
      unzlib.push(data, final);
    } catch (err) {
      throw new PngError(`PNG image data is corrupt or truncated (${(err as Error).message})`);
    }
  };
  return {
    push(compressed) {
      for (let at = 0; at < compressed.length && !full; at += SLICE) {
        guarded(compressed.subarray(at, at + SLICE), false);
      }
    },
    finish() {
      if (!full) guarded(new Uint8Array(0), true);
      if (written < expected) {
        throw new PngError(`PNG image data is truncated (${written} of ${expected} bytes)`);
      }
      return out;
    },
  };
}
