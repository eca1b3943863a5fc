// The local generator's animation: key frames letterboxed onto the requested
// canvas, one segment per frame setting. A segment lasts its `duration` and
// ends on its key frame: it crossfades there from the previous key frame (or
// from start_image) over min(duration, 1 s) at 8 frames per second, then
// holds the key frame for the rest as one long frame. The first segment
// without a start_image holds its key frame throughout. 8 fps keeps a 1080p
// render to seconds on one core; holds cost one frame whatever their length.

import type { ImageBatch } from '../../../lib/image/batch.ts';
import { pngToImageBatch } from '../../../lib/image/png-batch.ts';
import { PngError } from '../../../lib/png/index.ts';
import { createApngWriter } from './apng.ts';

export const VIDEO_SIZES = {
  '540p': { width: 960, height: 540 },
  '720p': { width: 1280, height: 720 },
  '1080p': { width: 1920, height: 1080 },
} as const;
export type VideoResolution = keyof typeof VIDEO_SIZES;

export const LOCAL_FPS = 8;
export const CROSSFADE_MAX_SECONDS = 1;
/** Key frames larger than this are refused before decoding (memory). */
export const KEY_FRAME_LIMITS = { maxSide: 8192, maxPixels: 16 * 1024 * 1024 };

export interface PlannedFrame {
  /** Anchor index to blend from (null: `to` alone), anchor index shown at `alpha` = 1. */
  from: number | null;
  to: number;
  alpha: number;
  delayMs: number;
}

/**
 * The frames of the animation. Anchors are [start_image?, key frames...];
 * delays are whole milliseconds whose running sum stays on the exact
 * segment boundaries, so the total is the sum of the durations.
 */
export function planFrames(durations: number[], hasStart: boolean): PlannedFrame[] {
  const frames: PlannedFrame[] = [];
  let elapsed = 0; // seconds, exact
  let emitted = 0; // ms already given out
  const push = (from: number | null, to: number, alpha: number, endS: number) => {
    const end = Math.round(endS * 1000);
    frames.push({ from, to, alpha, delayMs: end - emitted });
    emitted = end;
  };
  durations.forEach((d, i) => {
    const to = hasStart ? i + 1 : i;
    const from = to === 0 ? null : to - 1;
    if (from === null) {
      push(null, to, 1, elapsed + d);
    } else {
      const fade = Math.min(d, CROSSFADE_MAX_SECONDS);
      const steps = Math.max(1, Math.round(fade * LOCAL_FPS));
      for (let k = 1; k < steps; k++) push(from, to, k / steps, elapsed + (fade * k) / steps);
      // The last step reaches the key frame and holds it to the segment's end.
      push(from, to, 1, elapsed + d);
    }
    elapsed += d;
  });
  return frames;
}

/**
 * The image scaled to fit the canvas, centred on black, as RGB bytes:
 * averaged over each output pixel's area when shrinking, bilinear when
 * growing. Written for the job (bytes out, one pass) rather than through
 * the IMAGE resampler, which is several times slower at video sizes.
 */
export function letterbox(image: ImageBatch, width: number, height: number): Uint8Array {
  const scale = Math.min(width / image.width, height / image.height);
  const w = Math.max(1, Math.min(width, Math.round(image.width * scale)));
  const h = Math.max(1, Math.min(height, Math.round(image.height * scale)));
  const out = new Uint8ClampedArray(width * height * 3);
  const x0 = (width - w) >> 1;
  const y0 = (height - h) >> 1;
  const src = image.data;
  const sw = image.width;
  const sh = image.height;
  const fx = sw / w;
  const fy = sh / h;
  for (let y = 0; y < h; y++) {
    const row = ((y0 + y) * width + x0) * 3;
    if (fx >= 1 && fy >= 1) {
      const ya = Math.floor(y * fy);
      const yb = Math.max(ya + 1, Math.min(sh, Math.floor((y + 1) * fy)));
      for (let x = 0; x < w; x++) {
        const xa = Math.floor(x * fx);
        const xb = Math.max(xa + 1, Math.min(sw, Math.floor((x + 1) * fx)));
        let r = 0;
        let g = 0;
        let b = 0;
        for (let sy = ya; sy < yb; sy++) {
          for (let sx = xa, i = (sy * sw + xa) * 3; sx < xb; sx++, i += 3) {
            r += src[i];
            g += src[i + 1];
            b += src[i + 2];
          }
        }
        const k = 255 / ((yb - ya) * (xb - xa));
        out[row + x * 3] = r * k;
        out[row + x * 3 + 1] = g * k;
        out[row + x * 3 + 2] = b * k;
      }
    } else {
      const sy = Math.min(sh - 1, Math.max(0, (y + 0.5) * fy - 0.5));
      const ya = Math.floor(sy);
      const yb = Math.min(sh - 1, ya + 1);
      const ty = sy - ya;
      for (let x = 0; x < w; x++) {
        const sx = Math.min(sw - 1, Math.max(0, (x + 0.5) * fx - 0.5));
        const xa = Math.floor(sx);
        const xb = Math.min(sw - 1, xa + 1);
        const tx = sx - xa;
        for (let c = 0; c < 3; c++) {
          const top = src[(ya * sw + xa) * 3 + c] * (1 - tx) + src[(ya * sw + xb) * 3 + c] * tx;
          const bottom = src[(yb * sw + xa) * 3 + c] * (1 - tx) + src[(yb * sw + xb) * 3 + c] * tx;
          out[row + x * 3 + c] = (top * (1 - ty) + bottom * ty) * 255;
        }
      }
    }
  }
  return new Uint8Array(out.buffer);
}

/** a..b at alpha; the clamped array rounds as it stores. */
function blend(a: Uint8Array, b: Uint8Array, alpha: number, out: Uint8ClampedArray): Uint8Array {
  for (let i = 0; i < out.length; i++) out[i] = a[i] + (b[i] - a[i]) * alpha;
  return new Uint8Array(out.buffer);
}

/** Decodes a key frame's bytes (PNG only here, within the key frame limits) onto the canvas of `resolution`. */
export function prepareKeyFrame(bytes: Uint8Array, resolution: VideoResolution): Uint8Array {
  if (bytes[0] === 0xff && bytes[1] === 0xd8) throw new PngError('this is a JPEG image; the local generator reads PNG images only');
  const { width, height } = VIDEO_SIZES[resolution];
  return letterbox(pngToImageBatch(bytes, KEY_FRAME_LIMITS).image, width, height);
}

export interface RenderedVideo {
  content_type: 'image/apng';
  extension: 'apng';
  chunks: Uint8Array[];
  width: number;
  height: number;
  frames: number;
  duration_ms: number;
}

/** Renders the animation from prepared canvases ([start_image?, key frames...], see prepareKeyFrame). */
export async function renderMultiframe(input: {
  canvases: Uint8Array[];
  durations: number[];
  hasStart: boolean;
  resolution: VideoResolution;
  signal?: AbortSignal;
}): Promise<RenderedVideo> {
  const { width, height } = VIDEO_SIZES[input.resolution];
  const rgb = input.canvases;
  if (rgb.length !== input.durations.length + (input.hasStart ? 1 : 0)) throw new RangeError('one canvas per key frame (and start image) is needed');
  const plan = planFrames(input.durations, input.hasStart);
  const apng = createApngWriter(width, height, plan.length);
  const chunks = [...apng.head];
  const scratch = new Uint8ClampedArray(width * height * 3);
  // Two frames compress at once (off the JavaScript thread); chunks are written in order.
  const pending: Array<{ data: Promise<Uint8Array>; delayMs: number }> = [];
  const take = async () => {
    const next = pending.shift()!;
    chunks.push(...apng.chunks(await next.data, next.delayMs));
  };
  try {
    for (const f of plan) {
      input.signal?.throwIfAborted();
      const pixels = f.from === null || f.alpha === 1 ? rgb[f.to] : blend(rgb[f.from], rgb[f.to], f.alpha, scratch);
      const data = apng.compress(pixels);
      pending.push({ data, delayMs: f.delayMs });
      if (pending.length >= 2) await take();
    }
    while (pending.length > 0) await take();
  } finally {
    // Frames left behind by an abort must not surface as unhandled rejections.
    for (const p of pending) p.data.catch(() => undefined);
  }
  chunks.push(apng.end());
  return {
    content_type: 'image/apng',
    extension: 'apng',
    chunks,
    width,
    height,
    frames: plan.length,
    duration_ms: plan.reduce((n, f) => n + f.delayMs, 0),
  };
}
