// Bad input to the v2 assets endpoints: every case gets its 4xx envelope (or,
// for a client that goes away, a clean abort), never a 500, and never leaves
// an asset, a blob or a temporary file behind. Each test runs in process and
// through a real Node server; truncated uploads need the real server.
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import {
  blake3Of,
  bytesOf,
  concatBytes,
  enc,
  expectEnvelope,
  expectSameBytes,
  fileParts,
  fromHash,
  headByHash,
  json,
  MP,
  multipartBody,
  postRaw,
  randomBytes,
  upload,
  within,
} from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

describe.each(MODES)('bad upload input (%s)', (mode) => {
  let h: Harness;
  const start = (options: Partial<ServiceOptions> = {}) => startHarness(mode, options).then((x) => (h = x));
  afterEach(async () => {
    if (!h) return;
    try {
      expect(await h.blobFiles(), 'nothing stored by a refused request').toEqual({ blobs: [], temp: [] });
    } finally {
      await h.close();
    }
  });

  it.each([
    ['random bytes', randomBytes(4096)],
    ['plain text', enc('this is not a multipart body at all')],
    ['a part without Content-Disposition', enc('--bnd\r\nContent-Type: text/plain\r\n\r\nvalue\r\n--bnd--\r\n')],
    ['a part header line without a colon', enc('--bnd\r\nnot a header\r\n\r\nvalue\r\n--bnd--\r\n')],
    ['a part without a name', enc('--bnd\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--bnd--\r\n')],
    ['garbage after the boundary line', enc('--bndXYZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--bnd--\r\n')],
    ['an empty body', new Uint8Array(0)],
  ])('a multipart content type over %s is 400 malformed_request', async (_, body) => {
    await start();
    await expectEnvelope(await postRaw(h, body, MP('bnd')), 400, 'malformed_request');
  });

  it.each([
    ['after the file part', (b: string) => multipartBody(b, fileParts(randomBytes(50_000)), { close: false })],
    ['inside the file part', (b: string) => multipartBody(b, fileParts(randomBytes(50_000)), { close: false }).slice(0, -30_000)],
    [
      'after a text part that follows the file',
      (b: string) => multipartBody(b, [...fileParts(randomBytes(1000)), { name: 'tags', data: 'x' }], { close: false }),
    ],
    ['right after a boundary line', (b: string) => concatBytes(multipartBody(b, fileParts('abc'), { close: false }), `--${b}\r\n`)],
  ])('a body that ends %s without the closing boundary is 400 malformed_request', async (_, build) => {
    await start();
    await expectEnvelope(await postRaw(h, build('Bnd123'), MP('Bnd123')), 400, 'malformed_request');
  });

  it.each([
    ['application/json', 'application/json'],
    ['text/plain', 'text/plain'],
    ['urlencoded', 'application/x-www-form-urlencoded'],
    ['multipart/form-data without a boundary', 'multipart/form-data'],
    ['multipart/form-data with an empty boundary', 'multipart/form-data; boundary='],
    ['multipart/mixed', 'multipart/mixed; boundary=bnd'],
    ['no content type', null],
  ])('a %s body is 415 unsupported_media_type', async (_, type) => {
    await start();
    const body = multipartBody('bnd', fileParts('abc'));
    await expectEnvelope(await postRaw(h, body, type), 415, 'unsupported_media_type');
  });

  it.each([
    [
      'file',
      (b: string) =>
        multipartBody(
          b,
          fileParts('x').filter((p) => p.name !== 'file'),
        ),
    ],
    [
      'content_type',
      (b: string) =>
        multipartBody(
          b,
          fileParts('x').filter((p) => p.name !== 'content_type'),
        ),
    ],
    [
      'file_path',
      (b: string) =>
        multipartBody(
          b,
          fileParts('x').filter((p) => p.name !== 'file_path'),
        ),
    ],
  ])('a missing %s is 422 invalid_request naming the field', async (field, build) => {
    await start();
    const err = await expectEnvelope(await postRaw(h, build('bnd'), MP('bnd')), 422, 'invalid_request');
    expect(err.error.details?.field).toBe(field);
  });

  it.each([
    ['content_type', ''],
    ['content_type', 'not a media type'],
    ['content_type', 'image'],
    ['file_path', ''],
    ['tags', '[1, 2]'],
    ['tags', '["ok", {"no": 1}]'],
    ['tags', '[not json'],
    ['expires_in', 'soon'],
  ])('%s = %j is 422 invalid_request naming the field', async (field, value) => {
    await start();
    const { res, body } = await upload(h, randomBytes(3000), { [field]: value });
    expect(res.status).toBe(422);
    expect(body.error.code).toBe('invalid_request');
    expect(JSON.stringify(body.error.details)).toContain(field);
  });

  it.each([
    ['a NUL', 'text/plain; a=\u0000'],
    ['a control character', 'text/plain; a=\u0001'],
    ['DEL', 'text/plain; a=\u007f'],
    ['a character above U+00FF', 'text/plain; name=\u20ac'],
    ['a line separator before the parameters', 'text/plain\u2028; a=b'],
    ['a vertical tab before the parameters', 'text/plain\u000b; a=b'],
    ['a BOM before the parameters', 'text/plain\ufeff; a=b'],
  ])('a content_type with %s is refused up front (422), not served later as a 500', async (_, contentType) => {
    await start();
    const bytes = randomBytes(1000);
    const { res, body } = await upload(h, bytes, { content_type: contentType });
    if (res.status === 422) {
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.details?.field).toBe('content_type');
      return;
    }
    // Accepted: then the content must be servable (the contract serves Content-Type = content_type).
    expect(res.status).toBe(201);
    try {
      const got = await h.fetch(`/api/v2/assets/${body.id}/content`);
      const text = await got.text();
      expect({ status: got.status, body: text.slice(0, 200) }).toEqual({ status: 200, body: expect.any(String) });
    } finally {
      // Leave nothing behind for the shared no-leftovers check.
      await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' });
      await h.service.idle();
    }
  });

  it('a validation failure after the file part was staged leaves no temporary file', async () => {
    await start();
    const body = multipartBody('bnd', [
      { name: 'file', filename: 'f.bin', contentType: 'application/octet-stream', data: randomBytes(2 * 1024 * 1024) },
      { name: 'content_type', data: 'application/octet-stream' },
      { name: 'file_path', data: '../outside.bin' },
    ]);
    const err = await expectEnvelope(await postRaw(h, body, MP('bnd')), 422, 'invalid_request');
    expect(err.error.details?.field).toBe('file_path');
  });

  it.each([
    ['non-ASCII', 'fotos/снимок 東京.png'],
    ['quotes and semicolons', 'a "quoted"; name=evil.txt'],
    ['percent signs', '100% done %0d%0a.txt'],
  ])('a file_path with %s is stored as given and its content is served', async (_, path) => {
    await start();
    const bytes = randomBytes(500);
    const { res, body } = await upload(h, bytes, { file_path: path });
    expect(res.status).toBe(201);
    expect(body.file_path).toBe(path);
    try {
      const got = await h.fetch(`/api/v2/assets/${body.id}/content`);
      expect(got.status).toBe(200);
      expectSameBytes(await bytesOf(got), bytes);
      const fromHashRes = await fromHash(h, { hash: body.hash, file_path: `copy/${path}` });
      expect(fromHashRes.status).toBe(201);
      const copy = await json(fromHashRes);
      expect(copy.file_path).toBe(`copy/${path}`);
      expect((await h.fetch(`/api/v2/assets/${copy.id}/content`)).status).toBe(200);
      await h.fetch(`/api/v2/assets/${copy.id}`, { method: 'DELETE' });
    } finally {
      await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' });
      await h.service.idle();
    }
  });

  it.each([
    ['file', (b: string) => multipartBody(b, [...fileParts('one'), { name: 'file', filename: 'b', data: 'two' }])],
    ['content_type', (b: string) => multipartBody(b, [{ name: 'content_type', data: 'text/plain' }, ...fileParts('x')])],
  ])('%s given twice is 422 invalid_request', async (_, build) => {
    await start();
    await expectEnvelope(await postRaw(h, build('bnd'), MP('bnd')), 422, 'invalid_request');
  });

  // Not 64 hex digits cannot equal the computed hash: a mismatch like any other, not a malformed field.
  it.each([
    'abc',
    'blake3:nope',
    'blake3:xyz',
    `blake3:${'a'.repeat(63)}`,
    `blake3:${'a'.repeat(65)}`,
    `sha256:${'a'.repeat(64)}`,
    'a'.repeat(64),
    `blake3:${'g'.repeat(64)}`,
  ])('expected_hash %s is 409 hash_mismatch naming both hashes, storing nothing', async (hash) => {
    await start();
    const bytes = randomBytes(2000);
    const { res, body } = await upload(h, bytes, { expected_hash: hash });
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(body.error.code).toBe('hash_mismatch');
    expect(body.error.details).toEqual({ expected_hash: hash, computed_hash: await blake3Of(bytes) });
  });

  it.each([
    '../escape.txt',
    'a/../../b',
    '..',
    'a/..',
    '/etc/passwd',
    '/abs.png',
    'C:\\windows\\x',
    'C:/x',
    'a\\b',
    'a//b',
    './a',
    'a/',
    'a\u0000b',
    'line\nbreak',
  ])('file_path %j is 422 invalid_request', async (path) => {
    await start();
    const { res, body } = await upload(h, randomBytes(2000), { file_path: path });
    expect(res.status).toBe(422);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details?.field).toBe('file_path');
  });

  it('a text field over its size limit is refused with a 4xx envelope', async () => {
    await start();
    const { res, body } = await upload(h, 'x', { file_path: 'a'.repeat(70_000) });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(['malformed_request', 'invalid_request', 'payload_too_large']).toContain(body.error.code);
  });
});

describe.each(MODES)('bad ids, hashes and JSON bodies (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());

  it.each([
    'not-a-uuid',
    '12345',
    '00000000-0000-0000-0000-00000000000',
    '00000000-0000-0000-0000-0000000000000',
    'g0000000-0000-4000-8000-000000000000',
    '..%2F..%2Fetc%2Fpasswd',
    '%20',
  ])('id %s is 404 not_found on GET, content and DELETE', async (id) => {
    h = await startHarness(mode);
    await expectEnvelope(await h.fetch(`/api/v2/assets/${id}`), 404, 'not_found');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${id}/content`), 404, 'not_found');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${id}`, { method: 'DELETE' }), 404, 'not_found');
  });

  it('an id that is not valid percent-encoding is a 4xx envelope', async () => {
    h = await startHarness(mode);
    const res = await h.fetch('/api/v2/assets/%E0%A4%A');
    expect([400, 404]).toContain(res.status);
    await expectEnvelope(res, res.status, res.status === 400 ? 'malformed_request' : 'not_found');
  });

  // A hash that is not blake3:<64 hex digits> names no blob: simply not found, as the contract lists.
  it.each(['abc', 'blake3:nope', 'blake3:xyz', `blake3:${'a'.repeat(63)}`, `sha256:${'a'.repeat(64)}`, 'a'.repeat(64)])(
    'HEAD by-hash %s is 404 without a body; from-hash of it is 404 blob_not_found',
    async (hash) => {
      h = await startHarness(mode);
      expect(await headByHash(h, hash)).toBe(404);
      const err = await expectEnvelope(await fromHash(h, { hash }), 404, 'blob_not_found');
      expect(err.error.details).toBeUndefined();
    },
  );

  it.each([
    ['hash missing', { file_path: 'a.txt' }, 'hash'],
    ['hash a number', { hash: 42 }, 'hash'],
    ['file_path escaping', { hash: `blake3:${'a'.repeat(64)}`, file_path: '../a' }, 'file_path'],
    ['file_path absolute', { hash: `blake3:${'a'.repeat(64)}`, file_path: '/a' }, 'file_path'],
    ['file_path a number', { hash: `blake3:${'a'.repeat(64)}`, file_path: 7 }, 'file_path'],
    ['tags a string', { hash: `blake3:${'a'.repeat(64)}`, tags: 'input' }, 'tags'],
    ['an array body', [], null],
    ['a null body', null, null],
  ])('from-hash with %s is 422 invalid_request', async (_, body, field) => {
    h = await startHarness(mode);
    const err = await expectEnvelope(await fromHash(h, body), 422, 'invalid_request');
    if (field) expect(JSON.stringify(err.error.details)).toContain(field);
  });

  it('from-hash with a body that is not JSON is 400, with another content type 415', async () => {
    h = await startHarness(mode);
    const notJson = await h.fetch('/api/v2/assets/from-hash', { method: 'POST', body: '{"hash": ', headers: { 'content-type': 'application/json' } });
    await expectEnvelope(notJson, 400, 'malformed_request');
    const text = await h.fetch('/api/v2/assets/from-hash', { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } });
    await expectEnvelope(text, 415, 'unsupported_media_type');
  });

  it('an oversized from-hash body is 413 payload_too_large', async () => {
    h = await startHarness(mode);
    const hash = await blake3Of(enc('x'));
    const res = await fromHash(h, { hash, file_path: 'a.txt', padding: 'p'.repeat(200_000) });
    await expectEnvelope(res, 413, 'payload_too_large');
  });

  it('an oversized from-hash body is refused without the service reading it whole', async () => {
    h = await startHarness(mode);
    const hash = await blake3Of(enc('x'));
    if (mode === 'in-process') {
      // A 64 MiB body produced on demand, without a declared length: count what the service pulls.
      const head = enc(`{"hash":"${hash}","padding":"`);
      const total = 64 * 1024 * 1024;
      let pulled = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (pulled >= total) return c.close();
          const chunk = pulled === 0 ? head : new Uint8Array(64 * 1024).fill(0x61);
          pulled += chunk.length;
          c.enqueue(chunk);
        },
      });
      const res = await h.fetch('/api/v2/assets/from-hash', { method: 'POST', body: stream, headers: { 'content-type': 'application/json' } });
      await expectEnvelope(res, 413, 'payload_too_large');
      expect(pulled, 'bytes of the body the service read').toBeLessThan(4 * 1024 * 1024);
    } else {
      // Declares 50 MB, sends 256 KiB and waits: the 413 must come without the rest.
      const url = new URL(h.base);
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/api/v2/assets/from-hash',
        headers: { 'content-type': 'application/json', 'content-length': String(50_000_000) },
      });
      req.on('error', () => {});
      const status = new Promise<number>((resolve) => req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0))));
      req.write(concatBytes(`{"hash":"${hash}","padding":"`, new Uint8Array(256 * 1024).fill(0x61)));
      try {
        expect(await within(5000, 'a response to the oversized JSON body', status)).toBe(413);
      } finally {
        req.destroy();
      }
    }
  });

  it('a wrong method on a known path is 405 with Allow, an unknown path 404, both enveloped', async () => {
    h = await startHarness(mode);
    const put = await h.fetch('/api/v2/assets', { method: 'PUT', body: 'x' });
    expect(put.headers.get('allow')).toContain('POST');
    await expectEnvelope(put, 405, 'method_not_allowed');
    await expectEnvelope(await h.fetch('/api/v2/nothing-here'), 404, 'not_found');
  });
});
