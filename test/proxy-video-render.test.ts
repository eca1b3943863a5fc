// The local video renderer: the frame plan (segments, crossfades, holds,
// exact timing) and the APNG it writes, read back with a decoder written
// apart from the writer (Node's zlib, its own unfiltering).
import { describe, expect, it } from 'vitest';
import { encodePng } from '../lib/png/index.ts';
import { CROSSFADE_MAX_SECONDS, LOCAL_FPS, planFrames, prepareKeyFrame, renderMultiframe } from '../providers/local/video/render.ts';
import { type ApngFrame, readApng } from './helpers/apng-reader.ts';

const solid = (width: number, height: number, rgb: [number, number, number]) =>
  encodePng({ width, height, channels: 3, data: Uint8Array.from({ length: width * height * 3 }, (_, i) => rgb[i % 3]) });
const pixel = (f: ApngFrame, x: number, y: number) => Array.from(f.rgb.subarray((y * f.width + x) * 3, (y * f.width + x) * 3 + 3));

describe('frame plan', () => {
  it('holds the first key frame, then crossfades into each next one and holds it', () => {
    expect(LOCAL_FPS).toBe(8);
    expect(CROSSFADE_MAX_SECONDS).toBe(1);
    const plan = planFrames([1.5, 2], false);
    expect(plan.map((f) => f.delayMs)).toEqual([1500, 125, 125, 125, 125, 125, 125, 125, 1125]);
    expect(plan[0]).toEqual({ from: null, to: 0, alpha: 1, delayMs: 1500 });
    expect(plan.slice(1).map((f) => [f.from, f.to])).toEqual(Array(8).fill([0, 1]));
    expect(plan.slice(1).map((f) => f.alpha)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((k) => k / 8));
  });

  it('with a start image, every segment fades from the anchor before it', () => {
    const plan = planFrames([1, 1.05, 2.5], true);
    expect(plan.filter((f) => f.alpha === 1).map((f) => [f.from, f.to])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    expect(plan).toHaveLength(24);
    expect(plan.reduce((n, f) => n + f.delayMs, 0)).toBe(4550);
  });

  it('keeps whole-millisecond delays on the exact segment boundaries', () => {
    const durations = [1.0007, 3.3333, 9.9999, 1.5];
    const plan = planFrames(durations, false);
    let t = 0;
    const ends: number[] = [];
    for (const f of plan) {
      expect(Number.isInteger(f.delayMs)).toBe(true);
      expect(f.delayMs).toBeGreaterThanOrEqual(0);
      t += f.delayMs;
      if (f.alpha === 1) ends.push(t);
    }
    expect(ends).toEqual([1001, 4334, 14334, 15834]);
  });

  it('a segment shorter than the crossfade limit fades over its whole length', () => {
    const plan = planFrames([2, 0.5], false);
    expect(plan.slice(1).map((f) => f.delayMs)).toEqual([125, 125, 125, 125]);
  });
});

describe('APNG output', () => {
  it('decodes to the planned frames, at the canvas size, with letterboxed key frames and a crossfade', async () => {
    const red = solid(4, 2, [255, 0, 0]); // wide: bars above and below
    const blue = solid(2, 4, [0, 0, 255]); // tall: bars left and right
    const video = await renderMultiframe({
      canvases: [prepareKeyFrame(red, '540p'), prepareKeyFrame(blue, '540p')],
      durations: [1.5, 2],
      hasStart: false,
      resolution: '540p',
    });
    expect(video).toMatchObject({ content_type: 'image/apng', extension: 'apng', width: 960, height: 540, frames: 9, duration_ms: 3500 });
    const apng = readApng(Buffer.concat(video.chunks));
    expect({ width: apng.width, height: apng.height, plays: apng.plays, frames: apng.frames.length, ms: apng.durationMs }).toEqual({
      width: 960,
      height: 540,
      plays: 1,
      frames: 9,
      ms: 3500,
    });
    expect(apng.frames.map((f) => f.delayMs)).toEqual([1500, 125, 125, 125, 125, 125, 125, 125, 1125]);
    for (const f of apng.frames) expect(f).toMatchObject({ width: 960, height: 540, x: 0, y: 0, dispose: 0, blend: 0 });
    const [first] = apng.frames;
    const last = apng.frames[8];
    // 4x2 fits as 960x480 from row 30; 2x4 fits as 270x540 from column 345.
    expect(pixel(first, 480, 270)).toEqual([255, 0, 0]);
    expect(pixel(first, 480, 29)).toEqual([0, 0, 0]);
    expect(pixel(first, 480, 30)).toEqual([255, 0, 0]);
    expect(pixel(last, 480, 270)).toEqual([0, 0, 255]);
    expect(pixel(last, 344, 270)).toEqual([0, 0, 0]);
    expect(pixel(last, 345, 270)).toEqual([0, 0, 255]);
    // Halfway through the fade: half of each, where both images cover the canvas.
    const [r, g, b] = pixel(apng.frames[4], 480, 270);
    expect(Math.abs(r - 127.5)).toBeLessThanOrEqual(0.5);
    expect(g).toBe(0);
    expect(Math.abs(b - 127.5)).toBeLessThanOrEqual(0.5);
    // Outside the tall image, the wide one fades out to black.
    expect(pixel(apng.frames[4], 100, 270)).toEqual([128, 0, 0]);
  });

  it('scales to 720p and 1080p, keeping the aspect ratio', async () => {
    const square = solid(3, 3, [10, 200, 30]);
    for (const [resolution, width, height] of [
      ['720p', 1280, 720],
      ['1080p', 1920, 1080],
    ] as const) {
      const video = await renderMultiframe({
        canvases: [prepareKeyFrame(square, resolution), prepareKeyFrame(square, resolution)],
        durations: [1, 1],
        hasStart: false,
        resolution,
      });
      const apng = readApng(Buffer.concat(video.chunks));
      expect([apng.width, apng.height, apng.frames.length, apng.durationMs]).toEqual([width, height, 9, 2000]);
      const side = height;
      const x0 = (width - side) / 2;
      expect(pixel(apng.frames[0], x0, 0)).toEqual([10, 200, 30]);
      expect(pixel(apng.frames[0], x0 - 1, 0)).toEqual([0, 0, 0]);
    }
  });

  it('averages a large key frame down to the canvas', async () => {
    // A 1920x2160 checkerboard of single pixels becomes mid grey at 540p.
    const w = 1920;
    const h = 2160;
    const data = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if ((x + y) % 2 === 0) data.fill(255, (y * w + x) * 3, (y * w + x) * 3 + 3);
    const canvas = prepareKeyFrame(encodePng({ width: w, height: h, channels: 3, data }, { level: 1 }), '540p');
    const at = (x: number, y: number) => Array.from(canvas.subarray((y * 960 + x) * 3, (y * 960 + x) * 3 + 3));
    expect(at(480, 270)).toEqual([128, 128, 128]);
    expect(at(239, 270)).toEqual([0, 0, 0]);
  });

  it('refuses a JPEG key frame clearly, and stops when aborted', async () => {
    expect(() => prepareKeyFrame(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 0), '540p')).toThrow(/JPEG.*PNG images only/);
    const canvas = prepareKeyFrame(solid(2, 2, [1, 2, 3]), '540p');
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      renderMultiframe({ canvases: [canvas, canvas], durations: [1, 1], hasStart: false, resolution: '540p', signal: controller.signal }),
    ).rejects.toThrow('stop');
  });
});
