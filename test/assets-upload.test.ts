// POST /api/v2/assets: create vs dedup, the exact Asset shape, byte fidelity
// through the multipart parser, concurrency, expected_hash, the size limit,
// and the dedup fast path (from-hash, HEAD by-hash). Each test runs in process
// and through a real Node server.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import {
  ASSET_FIELDS,
  blake3Of,
  bytesOf,
  concatBytes,
  enc,
  expectAssetOf,
  expectEnvelope,
  expectSameBytes,
  fileParts,
  fromHash,
  headByHash,
  iso,
  json,
  multipartBody,
  postRaw,
  randomBytes,
  testClock,
  trickyPayload,
  upload,
} from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

describe.each(MODES)('asset upload (%s)', (mode) => {
  let h: Harness;
  const start = (options: Partial<ServiceOptions> = {}) => startHarness(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  it('a new blob answers 201 with created_new true and the real blake3 of the bytes', async () => {
    const clock = testClock();
    await start({ now: clock.now });
    const bytes = enc('hello, assets');
    const { res, body } = await upload(h, bytes, { content_type: 'image/png', file_path: 'inputs/photo.png' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body.created_new).toBe(true);
    await expectAssetOf(body, bytes, { content_type: 'image/png', file_path: 'inputs/photo.png' });
    expect(body.created_at).toBe(iso(clock.t));
    expect(body.url_expires_at).toBe(iso(clock.t + 3600_000));
    expect(body.expires_at).toBeNull();
    expect((await h.blobFiles()).blobs).toHaveLength(1);
  });

  it('the create response carries exactly the contract fields of Asset plus created_new', async () => {
    await start();
    const { res, body } = await upload(h, 'shape');
    expect(res.status).toBe(201);
    expect(Object.keys(body).sort()).toEqual([...ASSET_FIELDS, 'created_new'].sort());
  });

  it('the same bytes again are a dedup hit: 200, created_new false, a new id over the one blob', async () => {
    await start();
    const bytes = randomBytes(10_000);
    const first = await upload(h, bytes, { file_path: 'a.bin' });
    const second = await upload(h, bytes, { file_path: 'b.bin', content_type: 'application/x-other' });
    expect(first.res.status).toBe(201);
    expect(second.res.status).toBe(200);
    expect(second.body.created_new).toBe(false);
    expect(second.body.id).not.toBe(first.body.id);
    await expectAssetOf(second.body, bytes, { file_path: 'b.bin', content_type: 'application/x-other' });
    expect(second.body.hash).toBe(first.body.hash);
    const files = await h.blobFiles();
    expect(files).toEqual({ blobs: [expect.any(String)], temp: [] });
    // Each record keeps its own metadata over the shared bytes.
    const a = await json(await h.fetch(`/api/v2/assets/${first.body.id}`));
    expect(a.file_path).toBe('a.bin');
    expect(a.content_type).toBe('application/octet-stream');
  });

  it('concurrent uploads of the same bytes end with one blob and exactly one 201', async () => {
    await start();
    const bytes = randomBytes(512 * 1024);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => upload(h, bytes, { file_path: `c${i}.bin` })));
    const statuses = results.map((r) => r.res.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(results.filter((r) => r.body.created_new === true)).toHaveLength(1);
    const hash = await blake3Of(bytes);
    expect(new Set(results.map((r) => r.body.hash))).toEqual(new Set([hash]));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(8);
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
    for (const r of results) {
      const got = await h.fetch(`/api/v2/assets/${r.body.id}/content`);
      expect(got.status).toBe(200);
      expectSameBytes(await bytesOf(got), bytes);
    }
  });

  it('binary content with CR/LF and boundary-like sequences comes back byte for byte', async () => {
    await start();
    const bytes = trickyPayload();
    const { res, body } = await upload(h, bytes, { content_type: 'application/x-tricky' });
    expect(res.status).toBe(201);
    await expectAssetOf(body, bytes);
    const got = await h.fetch(`/api/v2/assets/${body.id}/content`);
    expect(got.status).toBe(200);
    expectSameBytes(await bytesOf(got), bytes);
  });

  it('a hand-built body with the file first, near-miss delimiters and repeated tags is parsed exactly', async () => {
    await start();
    const boundary = 'XYZ-boundary-123';
    const bytes = concatBytes('\r\n--XYZ-boundary-12', trickyPayload(), '\r\n--XYZ-boundary-124\r\n', '\r\n--xyz-boundary-123');
    const body = multipartBody(boundary, [
      { name: 'file', filename: 'x.bin', contentType: 'application/octet-stream', data: bytes },
      { name: 'ignored_extra', data: 'whatever' },
      { name: 'content_type', data: 'application/x-near-miss' },
      { name: 'file_path', data: 'dir/sub/x.bin' },
      { name: 'tags', data: 'input' },
      { name: 'tags', data: 'second' },
      { name: 'expected_hash', data: await blake3Of(bytes) },
    ]);
    const res = await postRaw(h, body, `multipart/form-data; boundary=${boundary}`);
    expect(res.status).toBe(201);
    const asset = await json(res);
    await expectAssetOf(asset, bytes, { content_type: 'application/x-near-miss', file_path: 'dir/sub/x.bin' });
    expectSameBytes(await bytesOf(await h.fetch(`/api/v2/assets/${asset.id}/content`)), bytes);
  });

  it('a body that arrives in tiny chunks, delimiters split across them, is parsed exactly', async () => {
    await start();
    const boundary = 'SplitBoundary-7';
    const bytes = concatBytes(trickyPayload(), '\r\n--SplitBoundary-X', randomBytes(3000), '\r\n--SplitBoundary-8', '\r');
    const body = multipartBody(boundary, [...fileParts(bytes, { file_path: 'split.bin' }), { name: 'tags', data: 'x' }]);
    const sizes = [1, 2, 3, 5, 7, 11, 13, 17, 19, 23];
    let at = 0;
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= body.length) return c.close();
        const n = sizes[i++ % sizes.length];
        c.enqueue(body.slice(at, at + n));
        at += n;
      },
    });
    const res = await postRaw(h, stream, `multipart/form-data; boundary=${boundary}`);
    expect(res.status).toBe(201);
    const asset = await json(res);
    await expectAssetOf(asset, bytes, { file_path: 'split.bin' });
    expectSameBytes(await bytesOf(await h.fetch(`/api/v2/assets/${asset.id}/content`)), bytes);
  });

  it('a multi-megabyte random payload round-trips with the right hash', async () => {
    await start();
    const bytes = randomBytes(12 * 1024 * 1024 + 123);
    const { res, body } = await upload(h, bytes, { content_type: 'video/mp4', file_path: 'big/clip.mp4' });
    expect(res.status).toBe(201);
    await expectAssetOf(body, bytes, { content_type: 'video/mp4', file_path: 'big/clip.mp4' });
    const got = await h.fetch(`/api/v2/assets/${body.id}/content`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe(String(bytes.length));
    const back = await bytesOf(got);
    expect(back.length).toBe(bytes.length);
    expect(await blake3Of(back)).toBe(body.hash);
    expectSameBytes(back, bytes);
  });

  it('an empty file is a valid asset with the blake3 of no bytes', async () => {
    await start();
    const empty = new Uint8Array(0);
    const { res, body } = await upload(h, empty, { content_type: 'text/plain', file_path: 'empty.txt' });
    expect(res.status).toBe(201);
    await expectAssetOf(body, empty, { content_type: 'text/plain', file_path: 'empty.txt' });
    const got = await h.fetch(`/api/v2/assets/${body.id}/content`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe('0');
    expect((await bytesOf(got)).length).toBe(0);
    const ranged = await h.fetch(`/api/v2/assets/${body.id}/content`, { headers: { range: 'bytes=0-' } });
    expect(ranged.headers.get('content-range')).toBe('bytes */0');
    await expectEnvelope(ranged, 416, 'range_not_satisfiable');
  });

  it('a matching expected_hash (any case) is accepted', async () => {
    await start();
    const bytes = enc('verified bytes');
    const hash = await blake3Of(bytes);
    const { res, body } = await upload(h, bytes, { expected_hash: hash.toUpperCase().replace('BLAKE3', 'blake3') });
    expect(res.status).toBe(201);
    expect(body.hash).toBe(hash);
  });

  it('an empty expected_hash (a form field left blank) is no claim', async () => {
    await start();
    const bytes = enc('unclaimed bytes');
    const { res, body } = await upload(h, bytes, { expected_hash: '' });
    expect(res.status).toBe(201);
    expect(body.hash).toBe(await blake3Of(bytes));
  });

  it('a differing expected_hash is 409 hash_mismatch with Retry-After, storing nothing', async () => {
    await start();
    const bytes = randomBytes(200_000);
    const wrong = await blake3Of(enc('other bytes'));
    const { res, body } = await upload(h, bytes, { expected_hash: wrong });
    expect(res.status).toBe(409);
    expect(body.error.code).toBe('hash_mismatch');
    expect(typeof body.error.message).toBe('string');
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
    expect(await headByHash(h, await blake3Of(bytes))).toBe(404);
    expect((await fromHash(h, { hash: await blake3Of(bytes) })).status).toBe(404);
  });

  it('a hash mismatch on bytes the service already has leaves the existing blob and adds no asset', async () => {
    await start();
    const bytes = enc('already here');
    const first = await upload(h, bytes);
    const { res } = await upload(h, bytes, { expected_hash: await blake3Of(enc('nope')) });
    expect(res.status).toBe(409);
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
    expect((await h.fetch(`/api/v2/assets/${first.body.id}/content`)).status).toBe(200);
    // Only the first asset exists: from-hash with its path returns it as-is.
    const again = await fromHash(h, { hash: first.body.hash, file_path: first.body.file_path });
    expect(again.status).toBe(200);
    expect((await json(again)).id).toBe(first.body.id);
  });

  it('over maxUploadBytes (declared length) is 413 payload_too_large and stores nothing', async () => {
    await start({ maxUploadBytes: 1024 * 1024 });
    const bytes = randomBytes(8 * 1024 * 1024);
    const body = multipartBody('B0undary', fileParts(bytes));
    const res = await postRaw(h, body, 'multipart/form-data; boundary=B0undary', { 'content-length': String(body.length) });
    await expectEnvelope(res, 413, 'payload_too_large');
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
    expect(await headByHash(h, await blake3Of(bytes))).toBe(404);
  });

  it('over maxUploadBytes without a declared length (streamed) is 413 and leaves no temp file', async () => {
    await start({ maxUploadBytes: 1024 * 1024 });
    const bytes = randomBytes(8 * 1024 * 1024);
    const body = multipartBody('B0undary', fileParts(bytes));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= body.length) return c.close();
        c.enqueue(body.slice(sent, sent + 64 * 1024));
        sent += 64 * 1024;
      },
    });
    const res = await postRaw(h, stream, 'multipart/form-data; boundary=B0undary');
    await expectEnvelope(res, 413, 'payload_too_large');
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
    expect(await headByHash(h, await blake3Of(bytes))).toBe(404);
    // The service still takes uploads under the limit.
    expect((await upload(h, 'small')).res.status).toBe(201);
  });
});

describe.each(MODES)('dedup fast path (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());

  it('HEAD by-hash is 200 for stored bytes and 404 for unknown ones, with no body', async () => {
    h = await startHarness(mode);
    const bytes = enc('probe me');
    await upload(h, bytes);
    const hash = await blake3Of(bytes);
    expect(await headByHash(h, hash)).toBe(200);
    expect(await headByHash(h, hash.toUpperCase().replace('BLAKE3', 'blake3'))).toBe(200);
    expect(await headByHash(h, await blake3Of(enc('never uploaded')))).toBe(404);
  });

  it('from-hash mints a new asset over existing bytes (201), returns an identical reference as-is (200)', async () => {
    h = await startHarness(mode);
    const bytes = randomBytes(3000);
    const first = await upload(h, bytes, { content_type: 'image/webp', file_path: 'orig.webp' });
    const minted = await fromHash(h, { hash: first.body.hash, file_path: 'copy/of.webp', tags: ['input'] });
    expect(minted.status).toBe(201);
    const asset = await json(minted);
    await expectAssetOf(asset, bytes, { content_type: 'image/webp', file_path: 'copy/of.webp' });
    expect(asset.id).not.toBe(first.body.id);
    expect(asset.created_new).toBe(false);
    expectSameBytes(await bytesOf(await h.fetch(`/api/v2/assets/${asset.id}/content`)), bytes);
    const same = await fromHash(h, { hash: first.body.hash, file_path: 'orig.webp' });
    expect(same.status).toBe(200);
    expect((await json(same)).id).toBe(first.body.id);
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
  });

  it('from-hash of bytes the service never stored is 404 blob_not_found', async () => {
    h = await startHarness(mode);
    const res = await fromHash(h, { hash: await blake3Of(enc('absent')), file_path: 'x.bin' });
    await expectEnvelope(res, 404, 'blob_not_found');
  });

  it('after the last asset over a blob is deleted, neither HEAD nor from-hash find it', async () => {
    h = await startHarness(mode);
    const { body } = await upload(h, 'short-lived');
    expect((await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' })).status).toBe(204);
    await h.service.idle();
    expect(await headByHash(h, body.hash)).toBe(404);
    await expectEnvelope(await fromHash(h, { hash: body.hash, file_path: 'again.bin' }), 404, 'blob_not_found');
  });
});
