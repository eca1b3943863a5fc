// The PNG codec: encode/decode round trips, every colour type and bit depth
// against fixtures written by Node's zlib, Adam7, tRNS, text chunks, and the
// errors corrupt or hostile files must produce.
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createImageBatch } from '../../lib/image/batch.ts';
import { imageBatchToPng, pngToImageBatch } from '../../lib/image/png-batch.ts';
import { decodePng, encodePng, PngError } from '../../lib/png/index.ts';
import { buildPng, chunk, expected, type Fixture, randomSamples, SPP } from './png-fixtures.ts';

const DEPTHS = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] } as const;

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

function fixture(colorType: Fixture['colorType'], bitDepth: Fixture['bitDepth'], interlaced: boolean, width = 13, height = 11): Fixture {
  const max = colorType === 3 ? 2 ** bitDepth - 1 : 2 ** bitDepth - 1;
  const samples = randomSamples(width * height * SPP[colorType], max, colorType * 100 + bitDepth);
  const f: Fixture = { width, height, colorType, bitDepth, interlaced, samples };
  if (colorType === 3) f.plte = randomSamples((max + 1) * 3, 255, 7);
  return f;
}

/** Walks the chunks of a PNG (test-side) to inspect what the encoder wrote. */
function chunksOf(png: Uint8Array): { type: string; data: Buffer; crcOk: boolean }[] {
  const b = Buffer.from(png);
  const out = [];
  for (let at = 8; at < b.length; ) {
    const len = b.readUInt32BE(at);
    const type = b.toString('latin1', at + 4, at + 8);
    const data = b.subarray(at + 8, at + 8 + len);
    out.push({ type, data, crcOk: crc32(b.subarray(at + 4, at + 8 + len)) >>> 0 === b.readUInt32BE(at + 8 + len) });
    at += 12 + len;
  }
  return out;
}

describe('PNG round trips', () => {
  for (const channels of [3, 4] as const) {
    it(`encodes and decodes ${channels === 3 ? 'RGB' : 'RGBA'} bytes exactly`, () => {
      const data = Uint8Array.from(randomSamples(17 * 9 * channels, 255, channels));
      const png = encodePng({ width: 17, height: 9, channels, data });
      const back = decodePng(png);
      expect([back.width, back.height, back.channels, back.bitDepth]).toEqual([17, 9, channels, 8]);
      expect(Array.from(back.data, (v) => Math.round(v * 255))).toEqual(Array.from(data));
      expect(
        maxDiff(
          back.data,
          Array.from(data, (v) => v / 255),
        ),
      ).toBeLessThan(1e-7);
    });
  }

  it('writes valid CRCs, IHDR first, IEND last, and uses more than one filter type', () => {
    const w = 32,
      h = 16;
    const data = new Uint8Array(w * h * 3).map((_, i) => (i * 5 + (i >> 7) * 3) & 255);
    const png = encodePng({ width: w, height: h, channels: 3, data }, { text: { prompt: '{"1":{}}' } });
    const chunks = chunksOf(png);
    expect(chunks.every((c) => c.crcOk)).toBe(true);
    expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'tEXt', 'IDAT', 'IEND']);
    const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
    const filters = new Set(Array.from({ length: h }, (_, y) => raw[y * (w * 3 + 1)]));
    expect(filters.size).toBeGreaterThan(1);
  });

  it('round-trips floats and text, Latin-1 as tEXt and other text as iTXt', () => {
    const data = Float32Array.from(randomSamples(5 * 4 * 3, 255, 9), (v) => v / 255);
    const text = { prompt: '{"3":{"class_type":"KSampler"}}', workflow: 'café', note: 'ünïcødé ✓ 画像' };
    const png = encodePng({ width: 5, height: 4, channels: 3, data }, { text });
    expect(chunksOf(png).map((c) => c.type)).toEqual(['IHDR', 'tEXt', 'tEXt', 'iTXt', 'IDAT', 'IEND']);
    const back = decodePng(png);
    expect(back.text).toEqual(text);
    expect(maxDiff(back.data, data)).toBeLessThan(1e-6);
  });

  it('clamps out-of-range floats and refuses a wrong sample count', () => {
    const png = encodePng({ width: 2, height: 1, channels: 3, data: Float32Array.from([-1, 2, 0.5, 0, 1, NaN]) });
    expect(Array.from(decodePng(png).data, (v) => Math.round(v * 255))).toEqual([0, 255, 128, 0, 255, 0]);
    expect(() => encodePng({ width: 2, height: 2, channels: 3, data: new Uint8Array(3) })).toThrow(PngError);
  });

  it('converts to and from an ImageBatch, alpha becoming the mask (1 - alpha)', () => {
    const batch = createImageBatch(3, 2, 2);
    for (let i = 0; i < batch.data.length; i++) batch.data[i] = (i % 256) / 255;
    const mask = Float32Array.from([0, 1, 0.2, 0.4, 0.6, 0.8], (v) => Math.round(v * 255) / 255);
    const second = pngToImageBatch(imageBatchToPng(batch, 1, { mask }));
    expect(second.image.count).toBe(1);
    expect(maxDiff(second.image.data, batch.data.subarray(18))).toBeLessThan(1e-6);
    expect(maxDiff(second.mask!, mask)).toBeLessThan(1e-6);
    expect(pngToImageBatch(imageBatchToPng(batch, 0)).mask).toBeNull();
    expect(() => imageBatchToPng(batch, 2)).toThrow(PngError);
  });
});

describe('PNG decoding of every colour type and bit depth', () => {
  for (const [type, depths] of Object.entries(DEPTHS)) {
    for (const depth of depths) {
      for (const interlaced of [false, true]) {
        it(`colour type ${type}, ${depth}-bit${interlaced ? ', Adam7' : ''}`, () => {
          const f = fixture(Number(type) as Fixture['colorType'], depth as Fixture['bitDepth'], interlaced);
          const want = expected(f);
          const got = decodePng(buildPng(f));
          expect([got.width, got.height, got.channels, got.bitDepth, got.colorType]).toEqual([13, 11, want.channels, depth, Number(type)]);
          expect(maxDiff(got.data, want.data)).toBeLessThan(1e-6);
        });
      }
    }
  }

  it('decodes tiny interlaced images whose Adam7 passes are partly empty', () => {
    for (const [w, h] of [
      [1, 1],
      [2, 2],
      [3, 5],
      [9, 1],
      [1, 9],
    ]) {
      const f = fixture(6, 8, true, w, h);
      expect(maxDiff(decodePng(buildPng(f)).data, expected(f).data)).toBeLessThan(1e-6);
    }
  });

  it('applies palette tRNS (shorter than the palette: the rest opaque)', () => {
    const f: Fixture = {
      width: 4,
      height: 1,
      colorType: 3,
      bitDepth: 2,
      samples: [0, 1, 2, 3],
      plte: [255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9],
      trns: [0, 128],
    };
    const got = decodePng(buildPng(f));
    expect(got.channels).toBe(4);
    expect(Array.from(got.data, (v) => Math.round(v * 255))).toEqual([255, 0, 0, 0, 0, 255, 0, 128, 0, 0, 255, 255, 9, 9, 9, 255]);
  });

  it('applies gray and RGB tRNS colour keys, including 16-bit ones', () => {
    const gray: Fixture = { width: 3, height: 1, colorType: 0, bitDepth: 4, samples: [5, 6, 15], trns: [0, 6] };
    expect(Array.from(decodePng(buildPng(gray)).data.filter((_, i) => i % 4 === 3))).toEqual([1, 0, 1]);
    const rgb: Fixture = { width: 2, height: 1, colorType: 2, bitDepth: 16, samples: [0x1234, 2, 3, 0x1234, 2, 4], trns: [0x12, 0x34, 0, 2, 0, 3] };
    const got = decodePng(buildPng(rgb));
    expect(got.data[3]).toBe(0);
    expect(got.data[7]).toBe(1);
    expect(got.data[0]).toBeCloseTo(0x1234 / 65535, 7);
  });

  it('keeps 16-bit precision', () => {
    const f: Fixture = { width: 2, height: 1, colorType: 4, bitDepth: 16, samples: [1, 65534, 32768, 65535] };
    const got = decodePng(buildPng(f));
    expect(got.data[0]).toBeCloseTo(1 / 65535, 9);
    expect(got.data[3]).toBeCloseTo(65534 / 65535, 7);
    expect(got.data[4]).toBeCloseTo(32768 / 65535, 7);
  });

  it('joins multiple IDAT chunks and skips ancillary chunks', () => {
    const f = fixture(2, 8, false, 40, 30);
    f.extra = [
      { type: 'gAMA', data: Uint8Array.of(0, 0, 0xb1, 0x8f) },
      { type: 'prVt', data: Uint8Array.of(1, 2, 3) },
    ];
    expect(maxDiff(decodePng(buildPng(f, 7)).data, expected(f).data)).toBeLessThan(1e-6);
  });
});

describe('PNG errors', () => {
  const good = () => buildPng(fixture(2, 8, false, 8, 8));

  function withHeader(width: number, height: number, depth = 8, colorType = 2, interlace = 0, idat: Buffer = deflateSync(Buffer.alloc(10))): Buffer {
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(width, 0);
    ihdr.writeUInt32BE(height, 4);
    ihdr.set([depth, colorType, 0, 0, interlace], 8);
    return Buffer.concat([good().subarray(0, 8), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]);
  }

  function expectPngError(bytes: Uint8Array, message: RegExp): void {
    let caught: unknown;
    try {
      decodePng(bytes);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(PngError);
    expect((caught as PngError).exception_type).toBe('PngError');
    expect((caught as Error).message).toMatch(message);
  }

  it('refuses a bad signature, including a JPEG', () => {
    const png = good();
    png[1] = 0x51;
    expectPngError(png, /signature/);
    expectPngError(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46), /signature/);
    expectPngError(new Uint8Array(0), /signature/);
  });

  it('detects a CRC mismatch', () => {
    const png = good();
    png[png.length - 20] ^= 0xff; // inside IDAT data
    expectPngError(png, /CRC mismatch/);
  });

  it('detects truncation anywhere', () => {
    const png = good();
    expectPngError(png.subarray(0, png.length - 12), /truncated/); // no IEND
    expectPngError(png.subarray(0, png.length - 30), /truncated/); // mid-IDAT
    expectPngError(png.subarray(0, 20), /truncated/); // mid-IHDR
  });

  it('detects image data that is cut short inside a complete zlib stream', () => {
    expectPngError(withHeader(8, 8, 8, 2, 0, deflateSync(Buffer.alloc(50))), /truncated/);
  });

  it('refuses oversized dimensions before inflating anything', () => {
    expectPngError(withHeader(16385, 1), /limit/);
    expectPngError(withHeader(1, 20000), /limit/);
    expectPngError(withHeader(9000, 9000), /limit/); // 81 MP > 64 MP
    expect(() => decodePng(good(), { maxSide: 4 })).toThrow(/limit/);
  });

  it('stops inflating a decompression bomb at the size the header implies', () => {
    const bomb = withHeader(4, 4, 8, 2, 0, deflateSync(Buffer.alloc(64 * 1024 * 1024)));
    expect(bomb.length).toBeLessThan(200_000);
    const started = Date.now();
    const got = decodePng(bomb); // surplus data is ignored, like libpng, without inflating it all
    expect(got.data.every((v) => v === 0)).toBe(true);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('refuses combinations the spec does not allow and unsupported methods', () => {
    expectPngError(withHeader(8, 8, 4, 2), /bit depth 4 is not allowed/);
    expectPngError(withHeader(8, 8, 16, 3), /bit depth 16 is not allowed/);
    expectPngError(withHeader(8, 8, 8, 5), /colour type 5/);
    expectPngError(withHeader(8, 8, 8, 2, 2), /interlace method 2/);
    expectPngError(withHeader(0, 8), /empty size/);
  });

  it('refuses corrupt zlib data, an unknown filter type and unknown critical chunks', () => {
    expectPngError(withHeader(2, 2, 8, 2, 0, Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff, 0xff])), /corrupt/);
    const raw = Buffer.alloc(2 * 7);
    raw[7] = 9;
    expectPngError(withHeader(2, 2, 8, 2, 0, deflateSync(raw)), /filter type 9/);
    const f = fixture(2, 8, false, 4, 4);
    f.extra = [{ type: 'XXXX', data: new Uint8Array(0) }];
    expectPngError(buildPng(f), /critical chunk XXXX/);
  });

  it('refuses a palette image without PLTE and a missing IDAT', () => {
    expectPngError(withHeader(2, 2, 8, 3), /no PLTE/);
    const png = good();
    const noIdat = Buffer.concat([png.subarray(0, 33), chunk('IEND', new Uint8Array(0))]);
    expectPngError(noIdat, /no image data/);
  });
});
