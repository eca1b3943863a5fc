// Asset retention (`expires_in`, `defaultRetentionSeconds`, dedup never
// shortening it, expiry and `service.sweep()`) and background content scanning.
// Each test runs in process and through a real Node server.
import { afterEach, describe, expect, it } from 'vitest';
import type { AssetView, ServiceOptions } from '../index.ts';
import {
  bytesOf,
  type Clock,
  enc,
  expectEnvelope,
  expectSameBytes,
  fromHash,
  headByHash,
  iso,
  json,
  randomBytes,
  testClock,
  upload,
  within,
} from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

const S = 1000;

describe.each(MODES)('retention (%s)', (mode) => {
  let h: Harness;
  let clock: Clock;
  const start = (options: Partial<ServiceOptions> = {}) => {
    clock = testClock();
    return startHarness(mode, { now: clock.now, ...options }).then((x) => (h = x));
  };
  afterEach(async () => h?.close());

  it.each([60, 86400, 604800])('expires_in %i sets expires_at to now + expires_in', async (seconds) => {
    await start();
    const { res, body } = await upload(h, randomBytes(100), { expires_in: String(seconds) });
    expect(res.status).toBe(201);
    expect(body.expires_at).toBe(iso(clock.t + seconds * S));
    expect((await json(await h.fetch(`/api/v2/assets/${body.id}`))).expires_at).toBe(body.expires_at);
  });

  it.each(['59', '0', '-60', '604801', '1.5', 'abc', '', '60s', '1e3'])('expires_in "%s" is 422 naming the field', async (value) => {
    await start();
    const { res, body } = await upload(h, randomBytes(100), { expires_in: value });
    expect(res.status).toBe(422);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details).toBeTruthy();
    expect(JSON.stringify(body.error.details)).toContain('expires_in');
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
  });

  it('expires_in out of range on from-hash is 422 too', async () => {
    await start();
    const { body } = await upload(h, 'base');
    for (const expires_in of [59, 604801, '3600', 1.5]) {
      const res = await fromHash(h, { hash: body.hash, file_path: 'c.txt', expires_in });
      const err = await expectEnvelope(res, 422, 'invalid_request');
      expect(JSON.stringify(err.error.details)).toContain('expires_in');
    }
  });

  it('without expires_in and without a default retention the asset never expires (expires_at null)', async () => {
    await start();
    const { body } = await upload(h, 'forever');
    expect(body.expires_at).toBeNull();
    clock.advance(400 * 24 * 3600 * S);
    expect((await h.fetch(`/api/v2/assets/${body.id}`)).status).toBe(200);
  });

  it('defaultRetentionSeconds applies without expires_in, may lie outside 60..604800, and expires_in replaces it', async () => {
    await start({ defaultRetentionSeconds: 10 });
    const dflt = await upload(h, 'default retention');
    expect(dflt.body.expires_at).toBe(iso(clock.t + 10 * S));
    const override = await upload(h, 'explicit retention', { expires_in: '3600' });
    expect(override.body.expires_at).toBe(iso(clock.t + 3600 * S));
    const minted = await fromHash(h, { hash: dflt.body.hash, file_path: 'minted.txt' });
    expect(minted.status).toBe(201);
    expect((await json(minted)).expires_at).toBe(iso(clock.t + 10 * S));
    clock.advance(11 * S);
    await expectEnvelope(await h.fetch(`/api/v2/assets/${dflt.body.id}`), 404, 'not_found');
    expect((await h.fetch(`/api/v2/assets/${override.body.id}`)).status).toBe(200);
  });

  it('a dedup hit never shortens the retention the bytes already have', async () => {
    await start();
    const bytes = randomBytes(3000);
    const long = await upload(h, bytes, { expires_in: '604800' });
    clock.advance(60 * S);
    const short = await upload(h, bytes, { expires_in: '60' });
    expect(short.res.status).toBe(200);
    expect(short.body.created_new).toBe(false);
    expect(Date.parse(short.body.expires_at)).toBeGreaterThanOrEqual(Date.parse(long.body.expires_at));
    // The longer-lived asset keeps its own deadline.
    expect((await json(await h.fetch(`/api/v2/assets/${long.body.id}`))).expires_at).toBe(long.body.expires_at);
    // Against non-expiring bytes, a short expires_in on a dedup hit does not make them expire.
    const forever = randomBytes(3000);
    await upload(h, forever);
    const dedup = await upload(h, forever, { expires_in: '60' });
    expect(dedup.res.status).toBe(200);
    expect(dedup.body.expires_at).toBeNull();
  });

  it('from-hash with a shorter expires_in does not shorten the retention either', async () => {
    await start();
    const long = (await upload(h, randomBytes(500), { expires_in: '86400' })).body;
    const res = await fromHash(h, { hash: long.hash, file_path: 'short.bin', expires_in: 60 });
    expect(res.status).toBe(201);
    const minted = await json(res);
    expect(Date.parse(minted.expires_at)).toBeGreaterThanOrEqual(Date.parse(long.expires_at));
    clock.advance(120 * S);
    expect((await h.fetch(`/api/v2/assets/${minted.id}`)).status).toBe(200);
  });

  it('an expired asset stops being served; sweep() removes it and its blob file', async () => {
    await start();
    const bytes = randomBytes(10_000);
    const { body } = await upload(h, bytes, { expires_in: '60' });
    clock.advance(60 * S - 1);
    expect((await h.fetch(`/api/v2/assets/${body.id}`)).status).toBe(200);
    clock.advance(1);
    await expectEnvelope(await h.fetch(`/api/v2/assets/${body.id}`), 404, 'not_found');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${body.id}/content`), 404, 'not_found');
    expect(await headByHash(h, body.hash)).toBe(404);
    await expectEnvelope(await fromHash(h, { hash: body.hash, file_path: 'revive.bin' }), 404, 'blob_not_found');
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
    const result = await h.service.sweep();
    expect(result).toEqual({ expired: 1, blobs_removed: 1, jobs_expired: 0, orphans_removed: 0 });
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
    await expectEnvelope(await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' }), 404, 'not_found');
    expect(await h.service.sweep()).toEqual({ expired: 0, blobs_removed: 0, jobs_expired: 0, orphans_removed: 0 });
  });

  it('sweep keeps a blob that a live asset still references', async () => {
    await start();
    const bytes = randomBytes(10_000);
    const shortLived = (await upload(h, bytes, { expires_in: '60' })).body;
    const longLived = (await upload(h, bytes, { expires_in: '604800' })).body;
    clock.advance(61 * S);
    await expectEnvelope(await h.fetch(`/api/v2/assets/${shortLived.id}`), 404, 'not_found');
    expect(await h.service.sweep()).toEqual({ expired: 1, blobs_removed: 0, jobs_expired: 0, orphans_removed: 0 });
    const res = await h.fetch(`/api/v2/assets/${longLived.id}/content`);
    expect(res.status).toBe(200);
    expectSameBytes(await bytesOf(res), bytes);
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
  });
});

describe.each(MODES)('content scanning (%s)', (mode) => {
  let h: Harness;
  // A failing test must not leave a scan waiting: close() waits for background work.
  const gates: Array<() => void> = [];
  afterEach(async () => {
    for (const release of gates.splice(0)) release();
    await h?.close();
  });

  function gatedScanner(verdict: Awaited<ReturnType<NonNullable<ServiceOptions['scanner']>>>) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    gates.push(release);
    const seen: Array<{ asset: AssetView; bytes: Uint8Array }> = [];
    const scanner: NonNullable<ServiceOptions['scanner']> = async (asset, { open }) => {
      const bytes = await bytesOf(new Response(await open()));
      seen.push({ asset, bytes });
      await gate;
      return verdict;
    };
    return { scanner, seen, release };
  }

  it('the scanner runs after the response and never blocks it; a keep verdict keeps the asset', async () => {
    const { scanner, seen, release } = gatedScanner({ action: 'keep' });
    h = await startHarness(mode, { scanner });
    const bytes = randomBytes(4096);
    const { res, body } = await within(5000, 'upload response while the scanner waits', upload(h, bytes));
    expect(res.status).toBe(201);
    // Still referenceable while the scan is pending.
    expect((await h.fetch(`/api/v2/assets/${body.id}`)).status).toBe(200);
    await within(
      5000,
      'scanner start',
      (async () => {
        while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
      })(),
    );
    expect(seen[0].asset.id).toBe(body.id);
    expectSameBytes(seen[0].bytes, bytes);
    release();
    await h.service.idle();
    expect((await h.fetch(`/api/v2/assets/${body.id}`)).status).toBe(200);
  });

  it('a delete verdict removes the asset and its unreferenced blob', async () => {
    const { scanner, seen, release } = gatedScanner({ action: 'delete', reason: 'test' });
    h = await startHarness(mode, { scanner });
    const { res, body } = await within(5000, 'upload response while the scanner waits', upload(h, enc('flagged content')));
    expect(res.status).toBe(201);
    const before = await h.fetch(`/api/v2/assets/${body.id}/content`);
    expect(before.status).toBe(200);
    expect(new TextDecoder().decode(await bytesOf(before))).toBe('flagged content');
    release();
    await h.service.idle();
    expect(seen.map((s) => s.asset.id)).toEqual([body.id]);
    await expectEnvelope(await h.fetch(`/api/v2/assets/${body.id}`), 404, 'not_found');
    expect(await headByHash(h, body.hash)).toBe(404);
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
  });

  it('bytes are scanned once: a later upload of the same bytes is not scanned again and stays', async () => {
    let calls = 0;
    h = await startHarness(mode, {
      // Would flag a second scan; there must not be one.
      scanner: () => (++calls === 2 ? { action: 'delete' } : { action: 'keep' }),
    });
    const bytes = randomBytes(5000);
    const first = (await upload(h, bytes, { file_path: 'one.bin' })).body;
    await h.service.idle();
    const second = (await upload(h, bytes, { file_path: 'two.bin' })).body;
    await h.service.idle();
    expect(calls).toBe(1);
    for (const id of [first.id, second.id]) {
      const kept = await h.fetch(`/api/v2/assets/${id}/content`);
      expect(kept.status).toBe(200);
      expectSameBytes(await bytesOf(kept), bytes);
    }
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
  });

  it('a failing scanner does not affect the upload or the asset', async () => {
    h = await startHarness(mode, {
      scanner: async () => {
        throw new Error('scanner exploded');
      },
    });
    const { res, body } = await upload(h, 'scan fails');
    expect(res.status).toBe(201);
    await h.service.idle();
    expect((await h.fetch(`/api/v2/assets/${body.id}`)).status).toBe(200);
  });
});
