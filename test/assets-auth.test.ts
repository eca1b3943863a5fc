// v2 assets authentication: open by default, a static bearer token, and
// account-scoped API keys under which another account's assets and blobs are
// invisible. Each test runs in process and through a real Node server.
import { afterEach, describe, expect, it } from 'vitest';
import {
  blake3Of,
  bytesOf,
  enc,
  expectEnvelope,
  expectSameBytes,
  fromHash,
  headByHash,
  json,
  randomBytes,
  unknownId,
  upload,
} from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe.each(MODES)('auth: open service (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());

  it('without token or accounts every assets endpoint works without credentials', async () => {
    h = await startHarness(mode);
    const bytes = enc('open access');
    const { res, body } = await upload(h, bytes);
    expect(res.status).toBe(201);
    expect((await h.fetch(`/api/v2/assets/${body.id}`)).status).toBe(200);
    const got = await h.fetch(`/api/v2/assets/${body.id}/content`);
    expect(got.status).toBe(200);
    expectSameBytes(await bytesOf(got), bytes);
    expect(await headByHash(h, body.hash)).toBe(200);
    expect((await fromHash(h, { hash: body.hash, file_path: 'other.txt' })).status).toBe(201);
    expect((await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE' })).status).toBe(204);
  });
});

describe.each(MODES)('auth: static token (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());
  const TOKEN = 'the-one-token';

  it('every endpoint is 401 unauthorized without the token, with a wrong one, or with another scheme', async () => {
    h = await startHarness(mode, { token: TOKEN });
    const bytes = enc('guarded bytes');
    const { body: asset } = await upload(h, bytes, {}, bearer(TOKEN));
    expect(asset.id).toBeTruthy();
    const bad: Array<Record<string, string>> = [
      {},
      bearer('wrong-token'),
      { authorization: `Basic ${btoa(`u:${TOKEN}`)}` },
      { authorization: 'Bearer' },
    ];
    for (const headers of bad) {
      const why = JSON.stringify(headers);
      const up = await upload(h, randomBytes(100), {}, headers);
      expect(up.res.status, why).toBe(401);
      expect(up.body.error.code, why).toBe('unauthorized');
      await expectEnvelope(await h.fetch(`/api/v2/assets/${asset.id}`, { headers }), 401, 'unauthorized');
      await expectEnvelope(await h.fetch(`/api/v2/assets/${asset.id}/content`, { headers }), 401, 'unauthorized');
      await expectEnvelope(await h.fetch(`/api/v2/assets/${asset.id}`, { method: 'DELETE', headers }), 401, 'unauthorized');
      await expectEnvelope(await fromHash(h, { hash: asset.hash, file_path: 'x.txt' }, headers), 401, 'unauthorized');
      expect(await headByHash(h, asset.hash, headers), why).toBe(401);
    }
    // Nothing the refused requests carried was stored, and the asset survived the refused DELETEs.
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
    const got = await h.fetch(`/api/v2/assets/${asset.id}/content`, { headers: bearer(TOKEN) });
    expect(got.status).toBe(200);
    expectSameBytes(await bytesOf(got), bytes);
  });

  it('with the token every endpoint works', async () => {
    h = await startHarness(mode, { token: TOKEN });
    const auth = bearer(TOKEN);
    const { res, body } = await upload(h, 'with token', {}, auth);
    expect(res.status).toBe(201);
    expect((await h.fetch(`/api/v2/assets/${body.id}`, { headers: auth })).status).toBe(200);
    expect((await h.fetch(`/api/v2/assets/${body.id}/content`, { headers: auth })).status).toBe(200);
    expect(await headByHash(h, body.hash, auth)).toBe(200);
    expect((await fromHash(h, { hash: body.hash, file_path: 'copy.txt' }, auth)).status).toBe(201);
    expect((await h.fetch(`/api/v2/assets/${body.id}`, { method: 'DELETE', headers: auth })).status).toBe(204);
  });
});

describe.each(MODES)('auth: account API keys (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());
  const A = bearer('key-of-alice');
  const A2 = bearer('second-key-of-alice');
  const B = bearer('key-of-bob');
  const start = () =>
    startHarness(mode, {
      accounts: [
        { id: 'alice', apiKeys: ['key-of-alice', 'second-key-of-alice'] },
        { id: 'bob', apiKeys: ['key-of-bob'] },
      ],
    }).then((x) => (h = x));

  it('requests without a key or with an unknown key are 401 unauthorized', async () => {
    await start();
    const up = await upload(h, 'no key');
    expect(up.res.status).toBe(401);
    expect(up.body.error.code).toBe('unauthorized');
    await expectEnvelope(await h.fetch(`/api/v2/assets/${unknownId()}`, { headers: bearer('nobody') }), 401, 'unauthorized');
    expect(await headByHash(h, await blake3Of(enc('x')), bearer('nobody'))).toBe(401);
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
  });

  it("every key of an account sees the account's assets", async () => {
    await start();
    const { res, body } = await upload(h, 'alice data', {}, A);
    expect(res.status).toBe(201);
    const got = await h.fetch(`/api/v2/assets/${body.id}`, { headers: A2 });
    expect(got.status).toBe(200);
    expect((await json(got)).id).toBe(body.id);
  });

  it("another account's asset is a plain 404 not_found, the same body as a nonexistent id", async () => {
    await start();
    const bytes = randomBytes(2048);
    const { body: asset } = await upload(h, bytes, {}, A);
    const none = unknownId();
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/content'],
      ['DELETE', ''],
    ] as const) {
      const theirs = await h.fetch(`/api/v2/assets/${asset.id}${suffix}`, { method, headers: B });
      const missing = await h.fetch(`/api/v2/assets/${none}${suffix}`, { method, headers: B });
      const theirsBody = await expectEnvelope(theirs, 404, 'not_found');
      const missingBody = await expectEnvelope(missing, 404, 'not_found');
      expect(theirsBody, `${method} ${suffix}`).toEqual(missingBody);
    }
    // Bob's DELETE did not touch Alice's asset.
    const still = await h.fetch(`/api/v2/assets/${asset.id}/content`, { headers: A });
    expect(still.status).toBe(200);
    expectSameBytes(await bytesOf(still), bytes);
  });

  it("from-hash and HEAD by-hash do not reveal another account's blob", async () => {
    await start();
    const { body: asset } = await upload(h, randomBytes(4096), {}, A);
    expect(await headByHash(h, asset.hash, A)).toBe(200);
    expect(await headByHash(h, asset.hash, B)).toBe(404);
    const unknown = await blake3Of(enc('nobody has these bytes'));
    expect(await headByHash(h, unknown, B)).toBe(404);
    const theirs = await expectEnvelope(await fromHash(h, { hash: asset.hash, file_path: 'stolen.bin' }, B), 404, 'blob_not_found');
    const absent = await expectEnvelope(await fromHash(h, { hash: unknown, file_path: 'stolen.bin' }, B), 404, 'blob_not_found');
    expect(theirs).toEqual(absent);
    expect((await fromHash(h, { hash: asset.hash, file_path: 'mine.bin' }, A)).status).toBe(201);
  });

  it("an account that uploads the same bytes gets its own asset; deleting it keeps the other account's bytes", async () => {
    await start();
    const bytes = randomBytes(8192);
    const alice = (await upload(h, bytes, {}, A)).body;
    const bob = await upload(h, bytes, {}, B);
    expect([200, 201]).toContain(bob.res.status);
    expect(bob.body.id).not.toBe(alice.id);
    expect(bob.body.hash).toBe(alice.hash);
    expect(await headByHash(h, alice.hash, B)).toBe(200);
    // Bob's signed url serves Bob's record only.
    expect((await h.fetch(bob.body.url)).status).toBe(200);
    await expectEnvelope(await h.fetch(`/api/v2/assets/${bob.body.id}`, { headers: A }), 404, 'not_found');
    expect((await h.fetch(`/api/v2/assets/${bob.body.id}`, { method: 'DELETE', headers: B })).status).toBe(204);
    await h.service.idle();
    const still = await h.fetch(`/api/v2/assets/${alice.id}/content`, { headers: A });
    expect(still.status).toBe(200);
    expectSameBytes(await bytesOf(still), bytes);
    expect(await h.blobFiles()).toEqual({ blobs: [expect.any(String)], temp: [] });
  });

  it("an account's signed url works without any header and serves exactly that asset", async () => {
    await start();
    const bytes = randomBytes(1000);
    const { body } = await upload(h, bytes, {}, A);
    const res = await h.fetch(body.url);
    expect(res.status).toBe(200);
    expectSameBytes(await bytesOf(res), bytes);
  });
});
