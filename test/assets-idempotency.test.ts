// `Idempotency-Key` on asset creation: single use, reject-on-duplicate (also
// for concurrent duplicates), released when the request definitely failed,
// expiring after 24 h. Each test runs in process and through a real Node server.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceOptions } from '../index.ts';
import { blake3Of, enc, expectEnvelope, fromHash, headByHash, randomBytes, testClock, upload } from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

const DAY = 24 * 60 * 60 * 1000;
const key = () => crypto.randomUUID();

describe.each(MODES)('Idempotency-Key (%s)', (mode) => {
  let h: Harness;
  const start = (options: Partial<ServiceOptions> = {}) => startHarness(mode, options).then((x) => (h = x));
  afterEach(async () => h?.close());

  it('a used key is rejected 422 idempotency_key_reuse, and the second request stores nothing', async () => {
    await start();
    const k = key();
    const first = await upload(h, 'first body', {}, { 'idempotency-key': k });
    expect(first.res.status).toBe(201);
    const second = randomBytes(5000);
    const again = await upload(h, second, {}, { 'idempotency-key': k });
    expect(again.res.status).toBe(422);
    expect(again.body.error.code).toBe('idempotency_key_reuse');
    // No replay: the rejection is not the first response.
    expect(again.body.id).toBeUndefined();
    expect(await headByHash(h, await blake3Of(second))).toBe(404);
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
    // The very same request again is rejected too.
    expect((await upload(h, 'first body', {}, { 'idempotency-key': k })).res.status).toBe(422);
  });

  it('concurrent requests with one key: exactly one is processed, the others are 422', async () => {
    await start();
    const k = key();
    const payloads = Array.from({ length: 6 }, () => randomBytes(64 * 1024));
    const results = await Promise.all(payloads.map((p) => upload(h, p, {}, { 'idempotency-key': k })));
    const statuses = results.map((r) => r.res.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422]);
    for (const r of results.filter((r) => r.res.status === 422)) expect(r.body.error.code).toBe('idempotency_key_reuse');
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
    const stored = await Promise.all(payloads.map(async (p) => headByHash(h, await blake3Of(p))));
    expect(stored.sort()).toEqual([200, 404, 404, 404, 404, 404]);
  });

  it('a 422 validation failure releases the key: the corrected request succeeds with it', async () => {
    await start();
    const k = key();
    const bad = await upload(h, 'payload', { file_path: '../escape.txt' }, { 'idempotency-key': k });
    expect(bad.res.status).toBe(422);
    expect(bad.body.error.code).not.toBe('idempotency_key_reuse');
    const fixed = await upload(h, 'payload', { file_path: 'fine.txt' }, { 'idempotency-key': k });
    expect(fixed.res.status).toBe(201);
    expect(fixed.body.file_path).toBe('fine.txt');
  });

  it('a hash mismatch releases the key: the corrected request succeeds with it', async () => {
    await start();
    const k = key();
    const bytes = enc('the real bytes');
    const bad = await upload(h, bytes, { expected_hash: await blake3Of(enc('other')) }, { 'idempotency-key': k });
    expect(bad.res.status).toBe(409);
    expect(bad.body.error.code).toBe('hash_mismatch');
    const fixed = await upload(h, bytes, { expected_hash: await blake3Of(bytes) }, { 'idempotency-key': k });
    expect(fixed.res.status).toBe(201);
    // ... and is then used.
    expect((await upload(h, bytes, {}, { 'idempotency-key': k })).res.status).toBe(422);
  });

  it('an upload refused as too large releases the key', async () => {
    await start({ maxUploadBytes: 2048 });
    const k = key();
    const big = await upload(h, randomBytes(10_000), {}, { 'idempotency-key': k });
    expect(big.res.status).toBe(413);
    expect((await upload(h, 'small', {}, { 'idempotency-key': k })).res.status).toBe(201);
  });

  it('a key expires after 24 hours', async () => {
    const clock = testClock();
    await start({ now: clock.now });
    const k = key();
    expect((await upload(h, 'day one', {}, { 'idempotency-key': k })).res.status).toBe(201);
    clock.advance(DAY - 1000);
    const early = await upload(h, 'a bit later', {}, { 'idempotency-key': k });
    expect(early.res.status).toBe(422);
    expect(early.body.error.code).toBe('idempotency_key_reuse');
    clock.advance(2000);
    expect((await upload(h, 'next day', {}, { 'idempotency-key': k })).res.status).toBe(201);
    // The renewed key is single use again.
    expect((await upload(h, 'next day again', {}, { 'idempotency-key': k })).res.status).toBe(422);
  });

  it('keys also guard from-hash, and one key space covers both create endpoints', async () => {
    await start();
    const k = key();
    const { body } = await upload(h, 'base', {}, { 'idempotency-key': k });
    await expectEnvelope(await fromHash(h, { hash: body.hash, file_path: 'copy.txt' }, { 'idempotency-key': k }), 422, 'idempotency_key_reuse');
    const k2 = key();
    expect((await fromHash(h, { hash: body.hash, file_path: 'copy.txt' }, { 'idempotency-key': k2 })).status).toBe(201);
    await expectEnvelope(await fromHash(h, { hash: body.hash, file_path: 'copy2.txt' }, { 'idempotency-key': k2 }), 422, 'idempotency_key_reuse');
  });

  it('an unusable key (too long, control characters) is a 422 validation failure, not a 500', async () => {
    await start();
    const long = await upload(h, 'x', {}, { 'idempotency-key': 'k'.repeat(300) });
    expect(long.res.status).toBe(422);
    expect(long.body.error.code).toBe('invalid_request');
    const spaced = await upload(h, 'x', {}, { 'idempotency-key': 'has a space' });
    expect(spaced.res.status).toBe(422);
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
  });

  it('keys are per account: two accounts may use the same key', async () => {
    await start({
      accounts: [
        { id: 'a', apiKeys: ['ka'] },
        { id: 'b', apiKeys: ['kb'] },
      ],
    });
    const k = key();
    expect((await upload(h, 'from a', {}, { authorization: 'Bearer ka', 'idempotency-key': k })).res.status).toBe(201);
    expect((await upload(h, 'from b', {}, { authorization: 'Bearer kb', 'idempotency-key': k })).res.status).toBe(201);
    expect((await upload(h, 'from a again', {}, { authorization: 'Bearer ka', 'idempotency-key': k })).res.status).toBe(422);
  });
});
