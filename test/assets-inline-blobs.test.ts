// The service on SQLite with its default inline blobs: a small upload lives in
// the database (no file), is served whole and by range, goes with its last
// asset, and an inline blob without its row (a crash between the two writes)
// is swept like an orphan file once past the grace period.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createService, type Service } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage, DEFAULT_INLINE_BLOB_BYTES } from '../storage/sql/sqlite.ts';
import { uploadForm } from './helpers/harness.ts';
import { bytes } from './suites/blob-store.ts';

const HOUR = 3600_000;
let dir: string;
let services: Service[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-inline-service-'));
});
afterEach(async () => {
  await Promise.all(services.map((s) => s.close()));
  services = [];
  await rm(dir, { recursive: true, force: true });
});

async function start(inlineBlobBytes?: number) {
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs, inlineBlobBytes });
  const service = await createService({ storage, sweepIntervalMs: 0 });
  services.push(service);
  return { service, storage };
}

async function blobFiles(): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of await readdir(join(dir, 'blobs'))) if (prefix.length === 2) keys.push(...(await readdir(join(dir, 'blobs', prefix))));
  return keys;
}

/** Uploads `data`: 201 for new bytes, 200 for bytes the account has (a dedup hit). */
async function upload(service: Service, data: Uint8Array, status = 201) {
  const res = await service.fetch(new Request('http://x/api/v2/assets', { method: 'POST', body: uploadForm(data) }));
  expect(res.status).toBe(status);
  const asset = (await res.json()) as { id: string; hash: string };
  return { ...asset, key: asset.hash.slice('blake3:'.length) };
}

describe('inline blobs under the service', () => {
  it('a small upload is a row, a large one a file; both are served whole and by range, and go with their asset', async () => {
    const { service, storage } = await start();
    const small = bytes(DEFAULT_INLINE_BLOB_BYTES, 1);
    const large = bytes(DEFAULT_INLINE_BLOB_BYTES + 1, 2);
    const a = await upload(service, small);
    const b = await upload(service, large);
    expect(await blobFiles()).toEqual([b.key]);

    for (const [asset, data] of [
      [a, small],
      [b, large],
    ] as const) {
      const whole = await service.fetch(new Request(`http://x/api/v2/assets/${asset.id}/content`));
      expect(whole.status).toBe(200);
      expect(new Uint8Array(await whole.arrayBuffer())).toEqual(data);
      const part = await service.fetch(new Request(`http://x/api/v2/assets/${asset.id}/content`, { headers: { range: 'bytes=100-199' } }));
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 100-199/${data.length}`);
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.subarray(100, 200));
    }

    // Its last asset deleted, the inline blob goes with the next sweep, as a file would.
    expect((await service.fetch(new Request(`http://x/api/v2/assets/${a.id}`, { method: 'DELETE' }))).status).toBe(204);
    await service.sweep();
    expect(await storage.blobs.has(a.key)).toBe(false);
    expect(await storage.blobs.has(b.key)).toBe(true);
    const head = await service.fetch(new Request(`http://x/api/v2/assets/by-hash/${a.hash}`, { method: 'HEAD' }));
    expect(head.status).toBe(404);
  });

  it('an inline blob without its row is swept once past the grace period; a young one and one with a row stay', async () => {
    const { service, storage } = await start();
    const kept = await upload(service, bytes(500, 3));
    // What a crash between the blob's commit and its asset's leaves: the bytes, no row.
    for (const [key, seed] of [
      ['aaaainlineold', 4],
      ['bbbbinlineyoung', 5],
    ] as const) {
      const writer = await storage.blobs.begin();
      await writer.write(bytes(300, seed));
      expect(await writer.commit(key)).toBe(true);
    }
    // Aged from beside the service, as time would: another connection to the same database.
    const db = new Database(join(dir, 'graphrun.db'));
    const stmt = db.prepare('UPDATE inline_blobs SET modified_at = ? WHERE key = ?');
    stmt.run(Date.now() - 2 * HOUR, 'aaaainlineold');
    stmt.run(Date.now() - 2 * HOUR, kept.key);
    db.close();

    expect((await service.sweep()).orphans_removed).toBe(1);
    expect(await storage.blobs.has('aaaainlineold')).toBe(false);
    expect(await storage.blobs.has('bbbbinlineyoung')).toBe(true);
    const content = await service.fetch(new Request(`http://x/api/v2/assets/${kept.id}/content`));
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes(500, 3));
    expect(await blobFiles()).toEqual([]);
  });

  it('a small blob stored as a file before inlining stays a file: its commit inline says it created nothing, and it goes with its last asset', async () => {
    const before = await start(0);
    const older = await upload(before.service, bytes(300, 6));
    expect(await blobFiles()).toEqual([older.key]);
    await before.service.close();
    services = [];

    const { service, storage } = await start();
    // A caller told "created" deletes the bytes when its own write after fails: these are the older asset's.
    const writer = await storage.blobs.begin();
    await writer.write(bytes(300, 6));
    expect(await writer.commit(older.key)).toBe(false);
    expect(await blobFiles()).toEqual([older.key]);
    const again = await upload(service, bytes(300, 6), 200);
    expect(again.key).toBe(older.key);
    const content = await service.fetch(new Request(`http://x/api/v2/assets/${older.id}/content`));
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes(300, 6));

    for (const id of [older.id, again.id])
      expect((await service.fetch(new Request(`http://x/api/v2/assets/${id}`, { method: 'DELETE' }))).status).toBe(204);
    await service.sweep();
    expect(await storage.blobs.has(older.key)).toBe(false);
    expect(await blobFiles()).toEqual([]);
  });

  it('with the limit set to 0 later, inline blobs stay readable and new small blobs are files', async () => {
    const first = await start();
    const inline = await upload(first.service, bytes(200, 7));
    await first.service.close();
    services = [];

    const { service } = await start(0);
    const content = await service.fetch(new Request(`http://x/api/v2/assets/${inline.id}/content`));
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes(200, 7));
    const file = await upload(service, bytes(200, 8));
    expect(await blobFiles()).toEqual([file.key]);
  });
});
