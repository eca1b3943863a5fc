// POST /api/upload/image (and bare /upload/image): content-addressed names,
// types and their retention, sniffed media types, the name working as a
// LoadImage input of a real job, auth, and every bad input a clear 4xx.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { decodePng } from '../lib/png/index.ts';
import { bytesOf, iso, testClock } from './helpers/assets.ts';
import {
  expectCloudError,
  type FilesHarness,
  follow,
  makePng,
  nameOf,
  postForm,
  reply,
  startFiles,
  uploadForm,
  uploadImageOk,
  view,
} from './helpers/cloud-files.ts';
import { MODES } from './helpers/harness.ts';
import { asKey, submitOk, waitForJob } from './helpers/jobs.ts';

const PNG = makePng(3, 2, 3, (x, y) => [x * 80, y * 120, 7]);

describe.each(MODES)('cloud /upload/image (%s)', (mode) => {
  let f: FilesHarness;
  const start = async (options: Partial<ServiceOptions> = {}) => (f = await startFiles(mode, options));
  afterEach(async () => f?.h.close());

  it('answers {name, subfolder, type}: the blake3 hash plus the extension; same bytes, same name', async () => {
    await start();
    const name = await nameOf(PNG);
    expect(await uploadImageOk(f.alice, { bytes: PNG, filename: 'cat.png' })).toEqual({ name, subfolder: '', type: 'input' });
    // Again, under another name with the same extension, with overwrite and a subfolder: the same name.
    const assetId = async () => new URL((await view(f.alice, `filename=${name}`)).res.headers.get('location')!).pathname.split('/')[4];
    const first = await assetId();
    const again = await uploadImageOk(f.alice, { bytes: PNG, filename: 'other.PNG' }, { overwrite: 'true', subfolder: 'x/y' });
    expect(again).toEqual({ name, subfolder: '', type: 'input' });
    // A no-op: the same file, not a second one.
    expect(await assetId()).toBe(first);
    // Bob's upload of the same bytes gets the same name too (it says nothing about who has it).
    expect((await uploadImageOk(f.bob, { bytes: PNG })).name).toBe(name);
    // A file named without an extension gets the one of its sniffed type.
    const blob = await uploadImageOk(f.alice, { bytes: PNG, filename: 'blob', contentType: 'application/octet-stream' });
    expect(blob.name).toBe(name);
    const r = await follow(f.h, await view(f.alice, `filename=${name}`));
    expect(r.headers.get('content-type')).toBe('image/png');
    expect(await bytesOf(r)).toEqual(PNG);
  });

  it('types: input (default), temp (24 hours), output; the type is echoed', async () => {
    const clock = testClock();
    await start({ now: clock.now, defaultRetentionSeconds: 7 * 86_400 });
    const bytes = makePng(2, 2, 4, () => [1, 2, 3, 4]);
    const v2 = asKey(f.h, 'key-alice');
    const expiryOf = async (name: string) => {
      const location = (await view(f.alice, `filename=${name}`)).res.headers.get('location')!;
      const id = new URL(location).pathname.split('/')[4];
      return (await reply(await v2.fetch(`/api/v2/assets/${id}`))).body.expires_at;
    };
    const temp = await uploadImageOk(f.alice, { bytes }, { type: 'temp' });
    expect(temp.type).toBe('temp');
    expect(await expiryOf(temp.name)).toBe(iso(clock.t + 86_400_000));
    // The same bytes as an input, a second later: stored for the default retention.
    clock.advance(1000);
    expect(await uploadImageOk(f.alice, { bytes }, { type: 'input' })).toEqual({ ...temp, type: 'input' });
    expect(await expiryOf(temp.name)).toBe(iso(clock.t + 7 * 86_400_000));
    // And as a temp file again: nothing shorter-lived replaces it.
    clock.advance(1000);
    expect(await uploadImageOk(f.alice, { bytes }, { type: 'temp' })).toEqual(temp);
    expect(await expiryOf(temp.name)).toBe(iso(clock.t - 1000 + 7 * 86_400_000));
    expect((await uploadImageOk(f.alice, { bytes: PNG }, { type: 'output' })).type).toBe('output');
  });

  it('the name is a LoadImage input: a job loads the upload and saves the same pixels', async () => {
    await start();
    const png = makePng(4, 3, 3, (x, y) => [x * 60, y * 100, (x + y) * 20]);
    const { name } = await uploadImageOk(f.alice, { bytes: png, filename: 'in.png' });
    const v2 = asKey(f.h, 'key-alice');
    const job = await submitOk(v2, {
      l: { class_type: 'LoadImage', inputs: { image: name } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'loaded' } },
    });
    const done = await waitForJob(v2, job.id, 'succeeded');
    expect(done.outputs).toHaveLength(1);
    const out = decodePng(await bytesOf(await f.h.fetch(done.outputs[0].url)));
    expect([out.width, out.height]).toEqual([4, 3]);
    expect(out.data).toEqual(decodePng(png).data);
    // The annotated form "name [input]" names the same file; bob cannot load alice's name.
    const annotated = await submitOk(v2, {
      l: { class_type: 'LoadImage', inputs: { image: `${name} [input]` } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'a' } },
    });
    await waitForJob(v2, annotated.id, 'succeeded');
    const bobs = await submitOk(asKey(f.h, 'key-bob'), {
      l: { class_type: 'LoadImage', inputs: { image: name } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'b' } },
    });
    const failed = await waitForJob(asKey(f.h, 'key-bob'), bobs.id, 'failed');
    expect(failed.error.message).toContain('no input image');
  });

  it('needs an API key when accounts are set: 401 {code, message}; /api and bare paths both work', async () => {
    await start();
    expectCloudError(await postForm(f.h, '/api/upload/image', uploadForm({ bytes: PNG })), 401, 'unauthorized');
    expectCloudError(await postForm(f.h, '/upload/image', uploadForm({ bytes: PNG }), { 'x-api-key': 'nope' }), 401, 'unauthorized');
    const bare = await postForm(f.alice, '/upload/image', uploadForm({ bytes: PNG }));
    expect({ status: bare.res.status, body: bare.body }).toEqual({ status: 200, body: { name: await nameOf(PNG), subfolder: '', type: 'input' } });
  });

  it('bad input: unknown type, bad overwrite, traversal subfolder, no file, empty file, not multipart', async () => {
    await start();
    const bad = async (form: FormData, field: string) => {
      const r = await postForm(f.alice, '/api/upload/image', form);
      expectCloudError(r, 400, 'invalid_request');
      expect(r.body.details.field).toBe(field);
      return r;
    };
    expect((await bad(uploadForm({ bytes: PNG }, { type: 'models' }), 'type')).body.message).toContain('input, temp, output');
    await bad(uploadForm({ bytes: PNG }, { overwrite: 'maybe' }), 'overwrite');
    await bad(uploadForm({ bytes: PNG }, { subfolder: '../up' }), 'subfolder');
    await bad(uploadForm(null, { type: 'input' }), 'image');
    await bad(uploadForm({ bytes: new Uint8Array(0) }), 'image');
    const dup = uploadForm({ bytes: PNG }, { type: 'input' });
    dup.append('type', 'temp');
    await bad(dup, 'type');
    const json = await reply(
      await f.alice.fetch('/api/upload/image', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
    );
    expectCloudError(json, 415, 'unsupported_media_type');
    const broken = await reply(
      await f.alice.fetch('/api/upload/image', {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=zz' },
        body: '--zz\r\nnonsense',
      }),
    );
    expectCloudError(broken, 400, 'malformed_request');
  });

  it('oversized: a body beyond the upload limit is 413; a PNG beyond 16384 px per edge is 400', async () => {
    await start({ maxUploadBytes: 4096 });
    const big = new Uint8Array(8192).fill(7);
    const r = await postForm(f.alice, '/api/upload/image', uploadForm({ bytes: big, filename: 'big.bin' }));
    expectCloudError(r, 413, 'payload_too_large');
    // The header says 20000x10 (the pixels need not follow: the header alone is refused).
    const huge = PNG.slice();
    new DataView(huge.buffer).setUint32(16, 20_000);
    const wide = await postForm(f.alice, '/api/upload/image', uploadForm({ bytes: huge }));
    expectCloudError(wide, 400, 'invalid_request');
    expect(wide.body.message).toContain('20000x2');
    // Nothing of either was kept.
    expect((await f.h.blobFiles()).temp).toEqual([]);
  });
});
