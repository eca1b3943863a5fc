// What one account can learn about or keep from another, and what a key
// removed from the configuration still opens; plus the from-hash shortcut.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createService, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { testClock } from './helpers/assets.ts';
import { type Harness, MODES, startHarness, uploadForm } from './helpers/harness.ts';

const accounts = [
  { id: 'alice', apiKeys: ['key-alice'] },
  { id: 'bob', apiKeys: ['key-bob'] },
];
const as = (key: string) => ({ authorization: `Bearer ${key}` });

describe.each(MODES)('tenancy (%s)', (mode) => {
  let h: Harness;
  afterEach(() => h?.close());

  it("another account's identical upload is a new asset to the uploader (201, created_new) over one stored blob", async () => {
    h = await startHarness(mode, { accounts });
    const a = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('shared bytes'), headers: as('key-alice') });
    expect(a.status).toBe(201);
    const b = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('shared bytes'), headers: as('key-bob') });
    expect(b.status).toBe(201);
    expect(((await b.json()) as any).created_new).toBe(true);
    const again = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('shared bytes'), headers: as('key-bob') });
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).created_new).toBe(false);
    expect((await h.blobFiles()).blobs).toHaveLength(1);
  });

  it('a stale signature does not override valid credentials', async () => {
    h = await startHarness(mode, { accounts });
    const res = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('mine'), headers: as('key-alice') });
    const asset = (await res.json()) as { id: string };
    const stale = `/api/v2/assets/${asset.id}/content?exp=1&sig=${'A'.repeat(43)}&account=alice`;
    expect((await h.fetch(stale)).status).toBe(403);
    const withKey = await h.fetch(stale, { headers: as('key-alice') });
    expect(withKey.status).toBe(200);
    expect(await withKey.text()).toBe('mine');
  });

  it('refuses a file_path that is not well-formed Unicode', async () => {
    h = await startHarness(mode);
    const res = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('x', { file_path: 'a\ud800.png' }) });
    // FormData turns a lone surrogate into U+FFFD on the wire; JSON keeps it.
    expect([201, 422]).toContain(res.status);
    const up = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('x') });
    const { hash } = (await up.json()) as { hash: string };
    const json = await h.fetch('/api/v2/assets/from-hash', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"hash":"${hash}","file_path":"a\\ud800.png"}`,
    });
    expect(json.status).toBe(422);
    expect(((await json.json()) as any).error.details.field).toBe('file_path');
  });
});

describe('scanner verdicts apply to the bytes', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it("a delete verdict removes every account's copy, and the same bytes are refused afterwards", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let scans = 0;
    h = await startHarness('in-process', {
      accounts,
      scanner: async () => {
        scans++;
        await gate;
        return { action: 'delete', reason: 'test verdict' };
      },
    });
    const a = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('bad bytes'), headers: as('key-alice') });
    const alice = (await a.json()) as { id: string; hash: string };
    // While the scan runs: a from-hash copy and another account's upload of the same bytes.
    const copy = await h.fetch('/api/v2/assets/from-hash', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as('key-alice') },
      body: JSON.stringify({ hash: alice.hash, file_path: 'copy.bin' }),
    });
    expect(copy.status).toBe(201);
    const copyId = ((await copy.json()) as { id: string }).id;
    const b = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('bad bytes'), headers: as('key-bob') });
    const bobId = ((await b.json()) as { id: string }).id;
    release();
    await h.service.idle();

    expect(scans).toBe(1); // the dedup hit was not scanned again
    expect((await h.fetch(`/api/v2/assets/${alice.id}`, { headers: as('key-alice') })).status).toBe(404);
    expect((await h.fetch(`/api/v2/assets/${copyId}`, { headers: as('key-alice') })).status).toBe(404);
    expect((await h.fetch(`/api/v2/assets/${bobId}`, { headers: as('key-bob') })).status).toBe(404);
    expect((await h.blobFiles()).blobs).toHaveLength(0);

    const again = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('bad bytes'), headers: as('key-bob') });
    expect(again.status).toBe(403);
    expect(((await again.json()) as any).error.code).toBe('forbidden');
    const files = await h.blobFiles();
    expect(files.blobs.length + files.temp.length).toBe(0);
  });
});

describe('from-hash shortcut', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('returns the existing record only for the same path and tags that lives at least as long as asked', async () => {
    const clock = testClock();
    h = await startHarness('in-process', { now: clock.now, defaultRetentionSeconds: 3600 });
    const up = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('bytes', { file_path: 'p.bin', tags: 'input' }) });
    const original = (await up.json()) as { id: string; hash: string };
    const post = (body: object) =>
      h.fetch('/api/v2/assets/from-hash', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const same = await post({ hash: original.hash, file_path: 'p.bin', tags: ['input'] });
    expect(same.status).toBe(200);
    expect(((await same.json()) as any).id).toBe(original.id);

    const otherTags = await post({ hash: original.hash, file_path: 'p.bin', tags: ['output'] });
    expect(otherTags.status).toBe(201);

    clock.advance(3590 * 1000); // the original has 10 s left
    const nearExpiry = await post({ hash: original.hash, file_path: 'p.bin', tags: ['input'] });
    expect(nearExpiry.status).toBe(201);
    const fresh = (await nearExpiry.json()) as { id: string; expires_at: string };
    expect(fresh.id).not.toBe(original.id);
    expect(Date.parse(fresh.expires_at)).toBeGreaterThanOrEqual(clock.now() + 3600 * 1000);
  });
});

describe('API keys follow the configuration', () => {
  const dirs: string[] = [];
  afterEach(async () => void (await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })))));

  it('a key removed from the accounts option stops working after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'graphrun-keys-'));
    dirs.push(dir);
    const start = async (keys: string[]) => {
      const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
      const storage = await createSqliteStorage({ filename: join(dir, 'db.sqlite'), blobs });
      return createService({ storage, logger: silentLogger, sweepIntervalMs: 0, accounts: [{ id: 'alice', apiKeys: keys }] });
    };
    const probe = (svc: Awaited<ReturnType<typeof start>>, key: string) =>
      svc.fetch(new Request(`http://svc/api/v2/assets/${crypto.randomUUID()}`, { headers: as(key) })).then((r) => r.status);

    const first = await start(['old']);
    expect(await probe(first, 'old')).toBe(404);
    await first.close();
    const second = await start(['new']);
    expect(await probe(second, 'old')).toBe(401);
    expect(await probe(second, 'new')).toBe(404);
    await second.close();
  });
});
