// POST /api/upload/mask (and bare /upload/mask): the mask's alpha applied to
// the caller's original, kept as a new PNG with the original's text chunks;
// masks of another size scaled, masks without alpha opaque; bad original_ref,
// another account's original, corrupt PNGs and oversized bodies refused.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { decodePng } from '../lib/png/index.ts';
import { bytesOf } from './helpers/assets.ts';
import {
  expectCloudError,
  type FilesHarness,
  follow,
  makePng,
  nameOf,
  postForm,
  startFiles,
  uploadForm,
  uploadImageOk,
  view,
} from './helpers/cloud-files.ts';
import { type Harness, MODES } from './helpers/harness.ts';
import { asKey, submitOk, waitForJob } from './helpers/jobs.ts';

const W = 4;
const H = 3;
const ORIGINAL = makePng(W, H, 3, (x, y) => [x * 60, y * 100, 33], { prompt: '{"1":{}}' });
/** The editor's mask: black, alpha marking the painted area. */
const MASK = makePng(W, H, 4, (x, y) => [0, 0, 0, x < 2 ? 0 : 40 * y + 10]);

const ref = (filename: string, extra: Record<string, unknown> = {}) => JSON.stringify({ filename, subfolder: '', type: 'input', ...extra });

async function maskOf(h: Harness, mask: Uint8Array, fields: Record<string, string>, path = '/api/upload/mask') {
  return postForm(h, path, uploadForm({ bytes: mask, filename: 'clipspace-mask.png' }, fields));
}

/** The pixels of a file as its owner views it. */
async function pixels(f: FilesHarness, name: string) {
  return decodePng(await bytesOf(await follow(f.h, await view(f.alice, `filename=${name}`))));
}

describe.each(MODES)('cloud /upload/mask (%s)', (mode) => {
  let f: FilesHarness;
  const start = async (options: Partial<ServiceOptions> = {}) => (f = await startFiles(mode, options));
  afterEach(async () => f?.h.close());

  it("copies the mask's alpha into the original and stores a new RGBA PNG keeping its text", async () => {
    await start();
    const { name: original } = await uploadImageOk(f.alice, { bytes: ORIGINAL });
    for (const path of ['/api/upload/mask', '/upload/mask']) {
      const r = await maskOf(f.alice, MASK, { type: 'input', subfolder: 'clipspace', original_ref: ref(original) }, path);
      expect(r.res.status).toBe(200);
      expect(r.body).toEqual({
        name: expect.stringMatching(/^[0-9a-f]{64}\.png$/),
        subfolder: '',
        type: 'input',
        metadata: { is_mask: true, original_hash: original.slice(0, 64) },
      });
      const out = await pixels(f, r.body.name);
      const src = decodePng(ORIGINAL);
      const mask = decodePng(MASK);
      expect([out.width, out.height, out.channels]).toEqual([W, H, 4]);
      for (let i = 0; i < W * H; i++) {
        expect([...out.data.subarray(i * 4, i * 4 + 3)]).toEqual([...src.data.subarray(i * 3, i * 3 + 3)]);
        expect(out.data[i * 4 + 3]).toBe(mask.data[i * 4 + 3]);
      }
      expect(out.text).toEqual({ prompt: '{"1":{}}' });
      expect(r.body.name).toBe(await nameOf(await bytesOf(await follow(f.h, await view(f.alice, `filename=${r.body.name}`)))));
    }
  });

  it('the result is a LoadImage input: a job loads it and succeeds', async () => {
    await start();
    const { name: original } = await uploadImageOk(f.alice, { bytes: ORIGINAL });
    const { body } = await maskOf(f.alice, MASK, { original_ref: ref(original) });
    const v2 = asKey(f.h, 'key-alice');
    const job = await submitOk(v2, {
      l: { class_type: 'LoadImage', inputs: { image: body.name } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'masked' } },
    });
    expect((await waitForJob(v2, job.id, 'succeeded')).outputs).toHaveLength(1);
  });

  it('a mask of another size is scaled to the original (nearest); a mask without alpha makes it opaque', async () => {
    await start();
    const { name: original } = await uploadImageOk(f.alice, { bytes: ORIGINAL });
    // 2x1: left half alpha 0, right half 200.
    const small = makePng(2, 1, 4, (x) => [0, 0, 0, x === 0 ? 0 : 200]);
    const scaled = await pixels(f, (await maskOf(f.alice, small, { original_ref: ref(original) })).body.name);
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) expect(Math.round(scaled.data[(y * W + x) * 4 + 3] * 255)).toBe(x < 2 ? 0 : 200);
    }
    const rgb = makePng(W, H, 3, () => [9, 9, 9]);
    const opaque = await pixels(f, (await maskOf(f.alice, rgb, { original_ref: ref(original) })).body.name);
    for (let i = 0; i < W * H; i++) expect(opaque.data[i * 4 + 3]).toBe(1);
  });

  it('original_ref: required, JSON, an object with a safe filename and a known type; a file of the caller', async () => {
    await start();
    const { name: original } = await uploadImageOk(f.alice, { bytes: ORIGINAL });
    const bad = async (fields: Record<string, string>, field: string) => {
      const r = await maskOf(f.alice, MASK, fields);
      expectCloudError(r, 400, 'invalid_request');
      expect(r.body.details.field).toBe(field);
    };
    await bad({}, 'original_ref');
    await bad({ original_ref: '{"filename": ' }, 'original_ref');
    await bad({ original_ref: '["a.png"]' }, 'original_ref');
    await bad({ original_ref: '"a.png"' }, 'original_ref');
    await bad({ original_ref: '{"subfolder": ""}' }, 'original_ref.filename');
    await bad({ original_ref: '{"filename": 12}' }, 'original_ref.filename');
    await bad({ original_ref: ref('../../etc/passwd') }, 'original_ref.filename');
    await bad({ original_ref: ref(original, { type: 'models' }) }, 'original_ref.type');
    await bad({ original_ref: ref(original, { subfolder: '/abs' }) }, 'original_ref.subfolder');
    await bad({ original_ref: ref(original), type: 'checkpoints' }, 'type');
    // Unknown, and another account's: the same 404.
    const unknown = await maskOf(f.alice, MASK, { original_ref: ref(`${'a'.repeat(64)}.png`) });
    expectCloudError(unknown, 404, 'not_found');
    expect(unknown.body.message).toContain('original_ref');
    expectCloudError(await maskOf(f.bob, MASK, { original_ref: ref(original) }), 404, 'not_found');
    // The annotated form names the file too.
    expect((await maskOf(f.alice, MASK, { original_ref: ref(`${original} [input]`) })).res.status).toBe(200);
  });

  it('corrupt or non-PNG images are 400 naming which one; an empty mask is 400', async () => {
    await start();
    const { name: original } = await uploadImageOk(f.alice, { bytes: ORIGINAL });
    const corrupt = MASK.slice(0, MASK.length - 20);
    const r1 = await maskOf(f.alice, corrupt, { original_ref: ref(original) });
    expectCloudError(r1, 400, 'invalid_request');
    expect(r1.body.details.field).toBe('image');
    const flipped = MASK.slice();
    flipped[40] ^= 0xff; // inside IDAT: the CRC no longer matches
    expectCloudError(await maskOf(f.alice, flipped, { original_ref: ref(original) }), 400, 'invalid_request');
    expectCloudError(await maskOf(f.alice, new TextEncoder().encode('not a png'), { original_ref: ref(original) }), 400, 'invalid_request');
    expectCloudError(await maskOf(f.alice, new Uint8Array(0), { original_ref: ref(original) }), 400, 'invalid_request');
    // An original that is not a PNG.
    const { name: text } = await uploadImageOk(f.alice, { bytes: 'plain text', filename: 'notes.txt', contentType: 'text/plain' });
    const r2 = await maskOf(f.alice, MASK, { original_ref: ref(text) });
    expectCloudError(r2, 400, 'invalid_request');
    expect(r2.body.details.field).toBe('original_ref');
    expect(r2.body.message).toContain('not a PNG');
  });

  it('oversized bodies are 413; auth is required (401 {code, message})', async () => {
    await start({ maxUploadBytes: 2048 });
    const { name: original } = await uploadImageOk(f.alice, { bytes: ORIGINAL });
    const noisy = makePng(64, 64, 4, (x, y) => [(x * 7919 + y * 104729) % 256, (x * y * 31) % 256, (x + y * 13) % 256, 128]);
    expect(noisy.length).toBeGreaterThan(2048);
    expectCloudError(await maskOf(f.alice, noisy, { original_ref: ref(original) }), 413, 'payload_too_large');
    expectCloudError(await maskOf(f.h, MASK, { original_ref: ref(original) }), 401, 'unauthorized');
    expectCloudError(await maskOf(f.h, MASK, { original_ref: ref(original) }, '/upload/mask'), 401, 'unauthorized');
  });
});
