// A whole service over the S3 blob store (SQLite metadata, blobs in an
// s3rver bucket): uploads through POST /api/v2/assets, in one part and in
// several, read back whole and ranged, deduplicated, and collected once no
// asset references them. In process and through a real Node server.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../adapters/node/server.ts';
import { createService, type Service, silentLogger } from '../index.ts';
import { createS3BlobStore } from '../storage/s3/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { MODES, uploadForm } from './helpers/harness.ts';
import { S3RVER_CREDENTIALS, type S3rverFixture, startS3rver } from './helpers/s3rver.ts';
import { bytes, expectBytes } from './suites/blob-store.ts';

const MIB = 1024 * 1024;

let s3: S3rverFixture;
beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(() => s3?.close());

describe.each(MODES)('a service on the S3 blob store (%s)', (mode) => {
  let dir: string;
  let service: Service;
  let stop = async () => {};
  afterEach(async () => {
    await stop();
    await service?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function start(prefix: string, options: { downloadRedirectSeconds?: number } = {}) {
    dir = await mkdtemp(join(tmpdir(), 'graphrun-s3-service-'));
    const blobs = await createS3BlobStore({
      bucket: s3.bucket,
      prefix,
      endpoint: s3.endpoint,
      credentials: S3RVER_CREDENTIALS,
      partSizeBytes: 5 * MIB,
    });
    const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });
    service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, ...options });
    let base = 'http://graphrun.test';
    if (mode === 'node-server') {
      const server = await serve(service, { host: '127.0.0.1', port: 0 });
      base = server.url;
      stop = () => server.close();
    }
    return (path: string, init?: RequestInit) => (mode === 'in-process' ? service.fetch(new Request(base + path, init)) : fetch(base + path, init));
  }

  it('uploads assets and serves them back from the bucket; same bytes dedup; unreferenced ones are collected', async () => {
    const prefix = `service-${mode}/`;
    const call = await start(prefix);
    const upload = async (data: Uint8Array, name: string) => {
      const res = await call('/api/v2/assets', { method: 'POST', body: uploadForm(data, {}, name) });
      return { status: res.status, body: (await res.json()) as { id: string; hash: string; size_bytes: number; created_new: boolean } };
    };
    const content = async (id: string, range?: string) => {
      const res = await call(`/api/v2/assets/${id}/content`, range ? { headers: { range } } : {});
      return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
    };

    const small = bytes(40_000, 5);
    const large = bytes(12 * MIB + 17, 9); // three parts of the store's 5 MiB
    const one = await upload(small, 'small.bin');
    const two = await upload(large, 'large.bin');
    expect([one.status, one.body.created_new, two.status, two.body.created_new, two.body.size_bytes]).toEqual([201, true, 201, true, large.length]);

    const whole = await content(two.body.id);
    expect(whole.status).toBe(200);
    expectBytes(whole.bytes, large);
    const ranged = await content(two.body.id, `bytes=${5 * MIB - 10}-${5 * MIB + 9}`);
    expect(ranged.status).toBe(206);
    expectBytes(ranged.bytes, large.subarray(5 * MIB - 10, 5 * MIB + 10));
    expectBytes((await content(one.body.id)).bytes, small);

    const again = await upload(large, 'again.bin');
    expect([again.status, again.body.created_new, again.body.hash]).toEqual([200, false, two.body.hash]);
    // One object per distinct content, under its hash; no temporary left.
    const key = (hash: string) => prefix + hash.slice('blake3:'.length);
    expect((await s3.keys(prefix)).sort()).toEqual([key(one.body.hash), key(two.body.hash)].sort());

    for (const id of [two.body.id, again.body.id]) expect((await call(`/api/v2/assets/${id}`, { method: 'DELETE' })).status).toBe(204);
    await service.sweep();
    expect(await s3.keys(prefix)).toEqual([key(one.body.hash)]);
  });

  it('with downloadRedirectSeconds, a download is a 302 to a presigned URL of the bucket that serves the bytes, ranges and name', async () => {
    const call = await start(`redirect-${mode}/`, { downloadRedirectSeconds: 120 });
    const data = bytes(30_000, 3);
    const res = await call('/api/v2/assets', { method: 'POST', body: uploadForm(data, { file_path: 'dir/clip.bin' }, 'clip.bin') });
    const { id, url } = (await res.json()) as { id: string; url: string };
    for (const path of [`/api/v2/assets/${id}/content`, url.slice(url.indexOf('/api/v2/'))]) {
      const redirect = await call(path, { redirect: 'manual' });
      expect(redirect.status, path).toBe(302);
      expect(redirect.headers.get('cache-control')).toBe('private, no-store');
      const location = redirect.headers.get('location') ?? '';
      expect(location.startsWith(s3.endpoint), location).toBe(true);
      expect(location).toMatch(/X-Amz-Expires=120/);
      // The bucket serves it with no credentials: whole, ranged, under the asset's name.
      const whole = await fetch(location);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-disposition')).toContain('clip.bin');
      expectBytes(new Uint8Array(await whole.arrayBuffer()), data);
      const ranged = await fetch(location, { headers: { range: 'bytes=100-199' } });
      expect(ranged.status).toBe(206);
      expectBytes(new Uint8Array(await ranged.arrayBuffer()), data.subarray(100, 200));
    }
    // HEAD is answered by the service itself.
    const head = await call(`/api/v2/assets/${id}/content`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(data.length)]);
  });
});
