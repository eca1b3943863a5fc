// GET /api/v2/assets/{id}, GET .../content (ranges, validators), the signed
// `url`, and DELETE. Each test runs in process and through a real Node server.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import {
  ASSET_FIELDS,
  bytesOf,
  enc,
  expectAssetOf,
  expectEnvelope,
  expectSameBytes,
  headByHash,
  iso,
  json,
  randomBytes,
  testClock,
  unknownId,
  upload,
} from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

describe.each(MODES)('asset metadata and content (%s)', (mode) => {
  let h: Harness;
  const start = (options: Partial<ServiceOptions> = {}) => startHarness(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  const TEN = enc('0123456789');
  async function tenBytes(contentType = 'text/plain') {
    const { res, body } = await upload(h, TEN, { content_type: contentType, file_path: 'digits.txt' });
    expect(res.status).toBe(201);
    return body;
  }
  const content = (id: string, headers: Record<string, string> = {}) => h.fetch(`/api/v2/assets/${id}/content`, { headers });

  it('GET returns the asset without created_new, with exactly the contract fields', async () => {
    await start();
    const created = await tenBytes('image/png');
    const res = await h.fetch(`/api/v2/assets/${created.id}`);
    expect(res.status).toBe(200);
    const asset = await json(res);
    await expectAssetOf(asset, TEN, { content_type: 'image/png', file_path: 'digits.txt' });
    expect(asset.id).toBe(created.id);
    expect(asset.created_at).toBe(created.created_at);
    expect(asset.expires_at).toBeNull();
    expect('created_new' in asset).toBe(false);
    expect(Object.keys(asset).sort()).toEqual([...ASSET_FIELDS].sort());
  });

  it('GET by an uppercase form of the id finds the same asset', async () => {
    await start();
    const created = await tenBytes();
    const res = await h.fetch(`/api/v2/assets/${created.id.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect((await json(res)).id).toBe(created.id);
  });

  it('content is 200 with the bytes, Content-Type, Content-Length, Accept-Ranges and an ETag', async () => {
    await start();
    const created = await tenBytes('text/x-digits');
    const res = await content(created.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/x-digits');
    expect(res.headers.get('content-length')).toBe('10');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('etag')).toMatch(/^(W\/)?"[^"]+"$/);
    expect(new TextDecoder().decode(await bytesOf(res))).toBe('0123456789');
  });

  it.each([
    ['bytes=0-4', '01234', '0-4'],
    ['bytes=5-', '56789', '5-9'],
    ['bytes=-3', '789', '7-9'],
    ['bytes=9-9', '9', '9-9'],
    ['bytes=9-', '9', '9-9'],
    ['bytes=8-100', '89', '8-9'],
    ['bytes=-100', '0123456789', '0-9'],
    ['bytes=3-99999999999999999999', '3456789', '3-9'],
    ['bytes=-99999999999999999999', '0123456789', '0-9'],
  ])('Range %s is 206 with %s', async (range, expected, span) => {
    await start();
    const created = await tenBytes('text/x-digits');
    const res = await content(created.id, { range });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${span}/10`);
    expect(res.headers.get('content-length')).toBe(String(expected.length));
    expect(res.headers.get('content-type')).toBe('text/x-digits');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(new TextDecoder().decode(await bytesOf(res))).toBe(expected);
  });

  it.each([
    'bytes=10-',
    'bytes=10-20',
    'bytes=1000-',
    'bytes=99999999999999999999-',
    'bytes=abc',
    'bytes=5-2',
    'bytes=-0',
    'bytes=-',
    'nonsense',
    'bytes=0-1, x',
  ])('Range %s is 416 with Content-Range bytes */size', async (range) => {
    await start();
    const created = await tenBytes();
    const res = await content(created.id, { range });
    expect(res.headers.get('content-range')).toBe('bytes */10');
    await expectEnvelope(res, 416, 'range_not_satisfiable');
  });

  it('a range deep inside a multi-megabyte blob is exactly that slice', async () => {
    await start();
    const bytes = randomBytes(3 * 1024 * 1024);
    const { body } = await upload(h, bytes);
    const res = await content(body.id, { range: 'bytes=1048570-2097160' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 1048570-2097160/${bytes.length}`);
    expectSameBytes(await bytesOf(res), bytes.subarray(1048570, 2097161));
  });

  it('If-None-Match with the ETag is 304 without a body; another tag gets the content', async () => {
    await start();
    const created = await tenBytes();
    const etag = (await content(created.id)).headers.get('etag')!;
    const notModified = await content(created.id, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    const other = await content(created.id, { 'if-none-match': '"something-else"' });
    expect(other.status).toBe(200);
    expect(new TextDecoder().decode(await bytesOf(other))).toBe('0123456789');
  });

  it('an unknown id is 404 not_found for GET, content and DELETE', async () => {
    await start();
    const id = unknownId();
    await expectEnvelope(await h.fetch(`/api/v2/assets/${id}`), 404, 'not_found');
    await expectEnvelope(await content(id), 404, 'not_found');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${id}`, { method: 'DELETE' }), 404, 'not_found');
  });
});

describe.each(MODES)('signed content url (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());
  const TOKEN = 'static-token-for-tests';
  const auth = { authorization: `Bearer ${TOKEN}` };

  async function setup() {
    const clock = testClock();
    h = await startHarness(mode, { token: TOKEN, now: clock.now });
    const bytes = randomBytes(5000);
    const { res, body } = await upload(h, bytes, {}, auth);
    expect(res.status).toBe(201);
    return { clock, bytes, asset: body };
  }

  it('works without any auth header until url_expires_at, then stops', async () => {
    const { clock, bytes, asset } = await setup();
    expect(asset.url_expires_at).toBe(iso(clock.t + 3600_000));
    // The same path without the signature needs the token.
    await expectEnvelope(await h.fetch(`/api/v2/assets/${asset.id}/content`), 401, 'unauthorized');
    const ok = await h.fetch(asset.url);
    expect(ok.status).toBe(200);
    expectSameBytes(await bytesOf(ok), bytes);
    const ranged = await h.fetch(asset.url, { headers: { range: 'bytes=10-19' } });
    expect(ranged.status).toBe(206);
    expectSameBytes(await bytesOf(ranged), bytes.subarray(10, 20));
    clock.advance(3600_000 - 1);
    expect((await h.fetch(asset.url)).status).toBe(200);
    clock.advance(1);
    const expired = await h.fetch(asset.url);
    expect([401, 403]).toContain(expired.status);
    const body = await expectEnvelope(expired, expired.status, expired.status === 401 ? 'unauthorized' : 'forbidden');
    expect(JSON.stringify(body)).not.toContain(asset.hash.slice(7));
  });

  it('re-fetching the asset gives a fresh url that works after the old one expired', async () => {
    const { clock, bytes, asset } = await setup();
    clock.advance(3000_000);
    const again = await json(await h.fetch(`/api/v2/assets/${asset.id}`, { headers: auth }));
    expect(again.url).not.toBe(asset.url);
    expect(again.url_expires_at).toBe(iso(clock.t + 3600_000));
    clock.advance(1000_000);
    expect((await h.fetch(asset.url)).status).not.toBe(200);
    const fresh = await h.fetch(again.url);
    expect(fresh.status).toBe(200);
    expectSameBytes(await bytesOf(fresh), bytes);
  });

  it('a tampered url is refused', async () => {
    const { asset } = await setup();
    const other = (await upload(h, 'another asset', {}, auth)).body;
    const url = new URL(asset.url);
    const sig = url.searchParams.get('sig')!;
    const exp = url.searchParams.get('exp');
    expect(sig).toBeTruthy();
    const variants: string[] = [];
    const edit = (f: (u: URL) => void) => {
      const u = new URL(asset.url);
      f(u);
      variants.push(u.toString());
    };
    edit((u) => u.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)));
    // A middle character (the last one of unpadded base64 carries ignored bits).
    edit((u) => u.searchParams.set('sig', sig.slice(0, 20) + (sig[20] === 'A' ? 'B' : 'A') + sig.slice(21)));
    if (exp) edit((u) => u.searchParams.set('exp', String(Number(exp) + 86_400)));
    for (const [k, v] of url.searchParams) {
      if (k !== 'sig' && k !== 'exp') edit((u) => u.searchParams.set(k, `${v}x`));
    }
    edit((u) => (u.pathname = u.pathname.replace(asset.id, other.id)));
    edit((u) => u.searchParams.set('sig', 'not-a-signature'));
    for (const variant of variants) {
      const res = await h.fetch(variant);
      expect([401, 403, 404], variant).toContain(res.status);
      const text = await res.text();
      expect(JSON.parse(text).error.code, variant).toMatch(/^(unauthorized|forbidden|not_found)$/);
    }
  });
});

describe.each(MODES)('asset delete (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());

  it('204, then GET, content and a second DELETE are 404', async () => {
    h = await startHarness(mode);
    const { body } = await upload(h, 'to be deleted');
    const del = await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${body.id}`), 404, 'not_found');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${body.id}/content`), 404, 'not_found');
    await expectEnvelope(await h.fetch(body.url), 404, 'not_found');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' }), 404, 'not_found');
  });

  it('two concurrent DELETEs of one asset: one 204, one 404', async () => {
    h = await startHarness(mode);
    const { body } = await upload(h, 'deleted twice at once');
    const [a, b] = await Promise.all([0, 1].map(() => h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' })));
    expect([a.status, b.status].sort()).toEqual([204, 404]);
    const loser = a.status === 404 ? a : b;
    await expectEnvelope(loser, 404, 'not_found');
    await h.service.idle();
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
  });

  it('deleting one of two assets over the same bytes keeps the other; deleting the last removes the blob file', async () => {
    h = await startHarness(mode);
    const bytes = randomBytes(40_000);
    const a = (await upload(h, bytes, { file_path: 'a.bin' })).body;
    const b = (await upload(h, bytes, { file_path: 'b.bin' })).body;
    expect(b.created_new).toBe(false);
    expect((await h.fetch(`/api/v2/assets/${a.id}`, { method: 'DELETE' })).status).toBe(204);
    await h.service.idle();
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
    const kept = await h.fetch(`/api/v2/assets/${b.id}/content`);
    expect(kept.status).toBe(200);
    expectSameBytes(await bytesOf(kept), bytes);
    expect(await headByHash(h, b.hash)).toBe(200);

    expect((await h.fetch(`/api/v2/assets/${b.id}`, { method: 'DELETE' })).status).toBe(204);
    await h.service.idle();
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
    expect(await headByHash(h, b.hash)).toBe(404);
    // The same bytes can be uploaded again afterwards, as new content.
    const again = await upload(h, bytes);
    expect(again.res.status).toBe(201);
    expect(again.body.created_new).toBe(true);
    expectSameBytes(await bytesOf(await h.fetch(`/api/v2/assets/${again.body.id}/content`)), bytes);
  });
});
