// Reverses the five scanline filters (None, Sub, Up, Average, Paeth) in place.
// `bpp` is the filter's byte distance: bytes per complete pixel, at least 1.
import { PngError } from './chunks.ts';

export function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/**
 * Unfilters `rows` scanlines of `stride` bytes (each preceded by its filter
 * byte) starting at `offset` in `raw`. The row before the first counts as zeros.
 */
export function unfilterRows(raw: Uint8Array, offset: number, rows: number, stride: number, bpp: number): void {
  for (let y = 0; y < rows; y++) {
    const start = offset + y * (stride + 1);
    const filter = raw[start];
    const cur = start + 1;
    const prev = y > 0 ? cur - (stride + 1) : -1;
    switch (filter) {
      case 0:
        break;
      case 1:
        for (let i = bpp; i < stride; i++) raw[cur + i] = (raw[cur + i] + raw[cur + i - bpp]) & 0xff;
        break;
      case 2:
        if (prev >= 0) for (let i = 0; i < stride; i++) raw[cur + i] = (raw[cur + i] + raw[prev + i]) & 0xff;
        break;
      case 3:
        for (let i = 0; i < stride; i++) {
          const a = i >= bpp ? raw[cur + i - bpp] : 0;
          const b = prev >= 0 ? raw[prev + i] : 0;
          raw[cur + i] = (raw[cur + i] + ((a + b) >> 1)) & 0xff;
        }
        break;
      case 4:
        for (let i = 0; i < stride; i++) {
          const a = i >= bpp ? raw[cur + i - bpp] : 0;
          const b = prev >= 0 ? raw[prev + i] : 0;
          const c = prev >= 0 && i >= bpp ? raw[prev + i - bpp] : 0;
          raw[cur + i] = (raw[cur + i] + paeth(a, b, c)) & 0xff;
        }
        break;
      default:
        throw new PngError(`PNG scanline ${y} has an unknown filter type ${filter}`);
    }
  }
}
