// The PNG decoder's memory bound (PngLimits.maxBytes): a PNG whose decode
// would hold more is refused from its header, before anything is inflated
// (the 16-bit 16384x4096 image is half a megabyte and 1.5 GiB
// decoded); tRNS counts; the pixel layouts that save copies (alpha apart,
// 8-bit RGBA) give what the float decode gives.
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { pngToImageBatch } from '../../lib/image/png-batch.ts';
import { decodeBytes, decodePng, decodePngRgba8, PngError, PngMemoryError, readPngHeader } from '../../lib/png/index.ts';
import { blankPng, HUGE_16BIT, pngOf } from '../helpers/blank-png.ts';
import { buildPng, chunk, type Fixture, randomSamples, SPP } from './png-fixtures.ts';

const GiB = 1024 ** 3;
/** The image decoded: 16-bit RGBA scanlines (8 bytes a pixel, a filter byte a row) and RGBA floats. */
const HUGE_DECODE_BYTES = 4096 * (1 + 16384 * 8) + 16384 * 4096 * 4 * 4;

function refusal(decode: () => unknown): PngMemoryError {
  try {
    decode();
  } catch (err) {
    expect(err).toBeInstanceOf(PngMemoryError);
    return err as PngMemoryError;
  }
  throw new Error('expected the decode to be refused');
}

describe('PNG decoding within maxBytes', () => {
  it("refuses the issue's 16-bit 16384x4096 PNG (about 500 KB) within 1 GiB, naming its size and the bytes", async () => {
    const png = await blankPng(HUGE_16BIT);
    expect(png.length).toBeLessThan(600_000);
    const err = refusal(() => decodePng(png, { maxBytes: GiB }));
    expect(err).toBeInstanceOf(PngError);
    expect(err).toMatchObject({ width: 16384, height: 4096, bytes: HUGE_DECODE_BYTES, maxBytes: GiB });
    expect(err.message).toBe(`PNG is 16384x4096: decoding it needs ${HUGE_DECODE_BYTES} bytes, more than the ${GiB} allowed`);
    expect(() => pngToImageBatch(png, { maxBytes: GiB })).toThrow(PngMemoryError);
    // As 8-bit RGBA it needs the scanlines and a byte a sample: still more than 512 MiB.
    expect(refusal(() => decodePngRgba8(png, { maxBytes: GiB / 2 })).bytes).toBe(4096 * (1 + 16384 * 8) + 16384 * 4096 * 4);
  });

  it('refuses from the header alone: corrupt image data, or none at all, never gets inflated', () => {
    const garbage = chunk('IDAT', new Uint8Array(1000).fill(0xa5));
    expect(() => decodePng(pngOf(HUGE_16BIT, [garbage, chunk('IEND', new Uint8Array(0))]))).toThrow(/corrupt/);
    expect(refusal(() => decodePng(pngOf(HUGE_16BIT, [garbage, chunk('IEND', new Uint8Array(0))]), { maxBytes: GiB })).message).toMatch(
      /^PNG is 16384x4096: decoding it needs/,
    );
    // What the header alone says, as callers can ask before decoding anything.
    expect(decodeBytes(readPngHeader(pngOf(HUGE_16BIT, [])), 4)).toBe(HUGE_DECODE_BYTES);
    expect(() =>
      readPngHeader(new Uint8Array(Buffer.concat([Buffer.from(pngOf(HUGE_16BIT, [])).subarray(0, 8), chunk('IEND', new Uint8Array(0))]))),
    ).toThrow(/must start with IHDR/);
    // A file cut right after IHDR: refused before the reader finds it truncated.
    expect(() => decodePng(pngOf(HUGE_16BIT, []))).toThrow(/truncated/);
    expect(refusal(() => decodePng(pngOf(HUGE_16BIT, []), { maxBytes: GiB })).bytes).toBe(HUGE_DECODE_BYTES);
  });

  it('counts the alpha channel a tRNS chunk adds, and decodes what fits exactly', () => {
    const f: Fixture = { width: 4, height: 4, colorType: 2, bitDepth: 8, samples: randomSamples(48, 255, 3) };
    const rgb = 4 * (1 + 12) + 16 * 3 * 4;
    const rgba = 4 * (1 + 12) + 16 * 4 * 4;
    expect(decodePng(buildPng(f), { maxBytes: rgb }).channels).toBe(3);
    expect(() => decodePng(buildPng(f), { maxBytes: rgb - 1 })).toThrow(PngMemoryError);
    const keyed = buildPng({ ...f, trns: [0, 1, 0, 2, 0, 3] });
    expect(refusal(() => decodePng(keyed, { maxBytes: rgb })).bytes).toBe(rgba);
    expect(decodePng(keyed, { maxBytes: rgba }).channels).toBe(4);
  });

  it('gives the same pixels with alpha apart and as 8-bit RGBA', () => {
    for (const [colorType, bitDepth] of [
      [0, 16],
      [2, 8],
      [3, 4],
      [4, 8],
      [6, 16],
    ] as const) {
      const max = 2 ** bitDepth - 1;
      const f: Fixture = { width: 7, height: 5, colorType, bitDepth, interlaced: true, samples: randomSamples(35 * SPP[colorType], max, bitDepth) };
      if (colorType === 3) f.plte = randomSamples((max + 1) * 3, 255, 7);
      const png = buildPng(f);
      const whole = decodePng(png);
      const apart = decodePng(png, { alphaPlane: true });
      const bytes = decodePngRgba8(png);
      const byte = (v: number) => Math.round(v * 255);
      for (let p = 0; p < 35; p++) {
        const rgba = [...whole.data.subarray(p * whole.channels, (p + 1) * whole.channels)];
        const alpha = whole.channels === 4 ? rgba[3] : 1;
        expect([...apart.data.subarray(p * 3, p * 3 + 3)]).toEqual(rgba.slice(0, 3));
        if (whole.channels === 4) expect(apart.alpha![p]).toBe(alpha);
        expect([...bytes.data.subarray(p * 4, p * 4 + 4)]).toEqual([...rgba.slice(0, 3), alpha].map(byte));
      }
      expect(apart.alpha === undefined).toBe(whole.channels === 3);
      expect(bytes.hasAlpha).toBe(whole.channels === 4);
    }
  });

  it('still stops a decompression bomb at the size the header implies when the bound allows the image', () => {
    const f: Fixture = { width: 4, height: 4, colorType: 2, bitDepth: 8, samples: new Array(48).fill(0) };
    const bomb = buildPng(f).subarray(0, 33);
    const idat = chunk('IDAT', deflateSync(Buffer.alloc(16 * 1024 * 1024)));
    const png = new Uint8Array(Buffer.concat([bomb, idat, chunk('IEND', new Uint8Array(0))]));
    expect(decodePng(png, { maxBytes: 1000 }).data.every((v) => v === 0)).toBe(true);
  });
});
