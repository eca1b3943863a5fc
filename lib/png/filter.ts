// Per-row filter choice for the encoder: try all five filters and keep the
// one with the smallest sum of absolute (signed) differences, the heuristic
// libpng recommends; it usually gives the best zlib ratio for photos.
import { paeth } from './unfilter.ts';

function cost(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i++) sum += bytes[i] < 128 ? bytes[i] : 256 - bytes[i];
  return sum;
}

/**
 * Filters `rows` rows of `stride` bytes from `pixels` into `out`, which has
 * one extra leading filter-type byte per row. `bpp` is bytes per pixel.
 */
export function filterRows(pixels: Uint8Array, rows: number, stride: number, bpp: number, out: Uint8Array): void {
  const candidates = Array.from({ length: 5 }, () => new Uint8Array(stride));
  const zeros = new Uint8Array(stride);
  for (let y = 0; y < rows; y++) {
    const cur = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : zeros;
    const [none, sub, up, avg, pae] = candidates;
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp] : 0;
      const b = prev[i];
      const c = i >= bpp ? prev[i - bpp] : 0;
      none[i] = cur[i];
      sub[i] = cur[i] - a;
      up[i] = cur[i] - b;
      avg[i] = cur[i] - ((a + b) >> 1);
      pae[i] = cur[i] - paeth(a, b, c);
    }
    let best = 0;
    let bestCost = Infinity;
    candidates.forEach((candidate, type) => {
      const c = cost(candidate);
      if (c < bestCost) [best, bestCost] = [type, c];
    });
    const at = y * (stride + 1);
    out[at] = best;
    out.set(candidates[best], at + 1);
  }
}
