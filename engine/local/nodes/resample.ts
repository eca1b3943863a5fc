// Resizing as the reference does it (torch interpolate, align_corners=False):
// nearest-exact, bilinear, bicubic (A = -0.75) and area (adaptive average
// pooling). All are separable, so each is a per-axis tap table applied to
// rows, then to columns.
import { createImageBatch, type ImageBatch } from '../../../lib/image/batch.ts';
import { cropImage, pyRound } from './image-ops.ts';

export const UPSCALE_METHODS = ['nearest-exact', 'bilinear', 'area', 'bicubic', 'lanczos'] as const;
export type UpscaleMethod = (typeof UPSCALE_METHODS)[number];

interface Taps {
  n: number;
  idx: Int32Array;
  w: Float64Array;
}

function cubic(x: number): number {
  const A = -0.75;
  const t = Math.abs(x);
  if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
  return t < 2 ? ((A * t - 5 * A) * t + 8 * A) * t - 4 * A : 0;
}

function tapsFor(method: UpscaleMethod, size: number, out: number): Taps {
  const scale = size / out;
  const clamp = (i: number) => Math.max(0, Math.min(size - 1, i));
  // Lanczos in the reference goes through Pillow; bicubic is the closest kernel we have.
  const kind = method === 'lanczos' ? 'bicubic' : method;
  const n = kind === 'nearest-exact' ? 1 : kind === 'bilinear' ? 2 : kind === 'bicubic' ? 4 : Math.ceil(scale) + 1;
  const idx = new Int32Array(out * n);
  const w = new Float64Array(out * n);
  for (let o = 0; o < out; o++) {
    const at = o * n;
    if (kind === 'nearest-exact') {
      idx[at] = Math.min(Math.floor((o + 0.5) * scale), size - 1);
      w[at] = 1;
    } else if (kind === 'bilinear') {
      const src = Math.max(0, (o + 0.5) * scale - 0.5);
      const i0 = Math.floor(src);
      const l = src - i0;
      idx[at] = clamp(i0);
      idx[at + 1] = clamp(i0 + 1);
      w[at] = 1 - l;
      w[at + 1] = l;
    } else if (kind === 'bicubic') {
      const src = (o + 0.5) * scale - 0.5;
      const i0 = Math.floor(src);
      const t = src - i0;
      for (let k = 0; k < 4; k++) {
        idx[at + k] = clamp(i0 - 1 + k);
        w[at + k] = cubic(t + 1 - k);
      }
    } else {
      const start = Math.floor((o * size) / out);
      const end = Math.ceil(((o + 1) * size) / out);
      for (let k = 0; k < n; k++) {
        idx[at + k] = clamp(start + k);
        w[at + k] = start + k < end ? 1 / (end - start) : 0;
      }
    }
  }
  return { n, idx, w };
}

/** Resizes every image of the batch to width x height. */
export function resizeImage(src: ImageBatch, width: number, height: number, method: UpscaleMethod): ImageBatch {
  if (width === src.width && height === src.height) return { ...src, data: src.data.slice() };
  const tx = tapsFor(method, src.width, width);
  const ty = tapsFor(method, src.height, height);
  const tmp = new Float64Array(src.count * src.height * width * 3);
  for (let r = 0; r < src.count * src.height; r++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++) {
        let v = 0;
        for (let k = 0; k < tx.n; k++) v += tx.w[x * tx.n + k] * src.data[(r * src.width + tx.idx[x * tx.n + k]) * 3 + c];
        tmp[(r * width + x) * 3 + c] = v;
      }
    }
  }
  const out = createImageBatch(width, height, src.count);
  const plane = width * 3;
  for (let b = 0; b < src.count; b++) {
    for (let y = 0; y < height; y++) {
      for (let i = 0; i < plane; i++) {
        let v = 0;
        for (let k = 0; k < ty.n; k++) v += ty.w[y * ty.n + k] * tmp[(b * src.height + ty.idx[y * ty.n + k]) * plane + i];
        // Bicubic overshoots; IMAGE values stay in 0..1.
        out.data[(b * height + y) * plane + i] = Math.min(Math.max(v, 0), 1);
      }
    }
  }
  return out;
}

/** The reference's common_upscale: optional centre crop to the target aspect, then resize. */
export function scaleImage(src: ImageBatch, width: number, height: number, method: UpscaleMethod, crop: 'disabled' | 'center'): ImageBatch {
  let input = src;
  if (crop === 'center') {
    const oldAspect = src.width / src.height;
    const newAspect = width / height;
    let x = 0;
    let y = 0;
    if (oldAspect > newAspect) x = pyRound((src.width - src.width * (newAspect / oldAspect)) / 2);
    else if (oldAspect < newAspect) y = pyRound((src.height - src.height * (oldAspect / newAspect)) / 2);
    input = cropImage(src, x, y, src.width - 2 * x, src.height - 2 * y);
  }
  return resizeImage(input, width, height, method);
}
