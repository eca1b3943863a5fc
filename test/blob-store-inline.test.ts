// Small blobs kept in the SQLite database in front of the fs store
// (storage/sql/inline-blobs.ts): the shared conformance suite with a limit
// that sends some of its blobs each way, then what only the pair can get
// wrong: where each blob goes, that it survives a reopen, and the limits it
// refuses (assets-inline-blobs.test.ts: the same under the service).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import type { BlobStore } from '../storage/types.ts';
import { blobStoreSuite, bytes, expectBytes, put, readAll } from './suites/blob-store.ts';

let root: string;
let n = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'graphrun-inline-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function open(inlineBlobBytes: number, dir = join(root, `store-${++n}`)) {
  const files = await createFsBlobStore({ dir: join(dir, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs: files, inlineBlobBytes });
  return { dir, files, storage, blobs: storage.blobs };
}

/** The objects the fs store holds as files, by key. */
async function filesIn(dir: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of await readdir(join(dir, 'blobs'))) {
    if (prefix.length === 2) keys.push(...(await readdir(join(dir, 'blobs', prefix))));
  }
  return keys.sort();
}

// 64 bytes: the suite's 3- to 50-byte blobs stay inline, its 80-byte and larger ones go to files.
blobStoreSuite('sqlite inline (64 bytes) + fs', async () => {
  const { storage } = await open(64);
  return { store: storage.blobs, cleanup: () => storage.close() };
});

describe('inline blobs', () => {
  it('keeps a blob up to the limit in the database and a larger one in a file, each read back whole and by range', async () => {
    const { dir, blobs, storage } = await open(100);
    expect(await put(blobs, 'small-one', bytes(100), 30)).toBe(true);
    expect(await put(blobs, 'large-one', bytes(101), 30)).toBe(true);
    expect(await filesIn(dir)).toEqual(['large-one']);
    expectBytes(await readAll(await blobs.get('small-one')), bytes(100));
    expectBytes(await readAll(await blobs.get('small-one', { start: 10, end: 19 })), bytes(100).subarray(10, 20));
    expectBytes(await readAll(await blobs.get('large-one', { start: 95, end: 200 })), bytes(101).subarray(95));
    const listed: string[] = [];
    for await (const o of blobs.list!()) listed.push(o.key);
    expect(listed.sort()).toEqual(['large-one', 'small-one']);
    await storage.close();
  });

  it('an inline blob outlives its process: reopened, the database still has its bytes', async () => {
    const first = await open(1024);
    await put(first.blobs, 'kept-one', bytes(700, 3));
    await first.storage.close();
    const again = await open(1024, first.dir);
    expectBytes(await readAll(await again.blobs.get('kept-one')), bytes(700, 3));
    expect(await filesIn(first.dir)).toEqual([]);
    await again.storage.close();
  });

  it('lists every inline blob, however many pages they take, then the files', async () => {
    const { blobs, storage } = await open(64);
    const keys = Array.from({ length: 2100 }, (_, i) => `page-${String(i).padStart(5, '0')}`);
    for (const key of keys) await put(blobs, key, bytes(8, key.length));
    await put(blobs, 'page-file', bytes(65));
    const listed: string[] = [];
    for await (const o of blobs.list!()) listed.push(o.key);
    expect(listed).toEqual([...keys, 'page-file']);
    await storage.close();
  });

  it('an inline key taken by an earlier or a concurrent commit of the same size: exactly one commit creates it', async () => {
    const { blobs, storage } = await open(64);
    expect(await put(blobs, 'taken-inline', bytes(40, 1))).toBe(true);
    expect(await put(blobs, 'taken-inline', bytes(40, 2))).toBe(false);
    expectBytes(await readAll(await blobs.get('taken-inline')), bytes(40, 1));
    const writers = await Promise.all([1, 2, 3, 4, 5].map(() => blobs.begin()));
    await Promise.all(writers.map((w, i) => w.write(bytes(40, 10 + i))));
    const results = await Promise.all(writers.map((w) => w.commit('raced-inline')));
    expect(results.filter(Boolean)).toHaveLength(1);
    expectBytes(await readAll(await blobs.get('raced-inline')), bytes(40, 10 + results.indexOf(true)));
    await storage.close();
  });

  it('lists inline blobs even over a blob store that cannot list (so the sweep still finds their orphans)', async () => {
    const { list: _, ...unlisted } = createMemoryBlobStore();
    const storage = await createSqliteStorage({ filename: join(root, `unlisted-${++n}.db`), blobs: unlisted, inlineBlobBytes: 64 });
    await put(storage.blobs, 'listed-inline', bytes(10));
    const listed: string[] = [];
    for await (const o of storage.blobs.list!()) listed.push(o.key);
    expect(listed).toEqual(['listed-inline']);
    await storage.close();
  });

  it('a blob store that fails while taking the buffered bytes: the write fails, and abort reaches its writer', async () => {
    const memory = createMemoryBlobStore();
    const aborted: boolean[] = [];
    const failing: BlobStore = {
      ...memory,
      async begin() {
        const writer = await memory.begin();
        const index = aborted.push(false) - 1;
        return {
          write: async () => {
            throw new Error('disk full');
          },
          commit: (key) => writer.commit(key),
          abort: async () => {
            aborted[index] = true;
            await writer.abort();
          },
        };
      },
    };
    const storage = await createSqliteStorage({ filename: join(root, `failing-${++n}.db`), blobs: failing, inlineBlobBytes: 64 });
    const writer = await storage.blobs.begin();
    await writer.write(bytes(50));
    await expect(writer.write(bytes(50))).rejects.toThrow('disk full');
    await writer.abort();
    expect(aborted).toEqual([true]);
    expect(await storage.blobs.has('never-one')).toBe(false);
    await storage.close();
  });

  it('an instance with the limit at 0 reads the inline blobs another instance on the same database writes', async () => {
    const dir = join(root, `shared-${++n}`);
    const none = await open(0, dir);
    // Its own blob store: a blob directory is one process's.
    const inlining = {
      storage: await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs: createMemoryBlobStore(), inlineBlobBytes: 64 }),
    };
    await put(inlining.storage.blobs, 'shared-one', bytes(30, 4));
    expectBytes(await readAll(await none.blobs.get('shared-one')), bytes(30, 4));
    // Its own small blobs go to files, and a key held inline is taken there too.
    expect(await put(none.blobs, 'own-one', bytes(30, 5))).toBe(true);
    expect(await put(none.blobs, 'shared-one', bytes(30, 4))).toBe(false);
    expect(await filesIn(dir)).toEqual(['own-one']);
    await none.storage.close();
    await inlining.storage.close();
  });

  it('a key held inline refuses a larger write under it', async () => {
    const { blobs, dir, storage } = await open(64);
    expect(await put(blobs, 'claimed-one', bytes(10))).toBe(true);
    expect(await put(blobs, 'claimed-one', bytes(500))).toBe(false);
    expect(await filesIn(dir)).toEqual([]);
    expectBytes(await readAll(await blobs.get('claimed-one')), bytes(10));
    await storage.close();
  });

  it('writes spill to the file store in order when the limit is passed mid-stream', async () => {
    const { blobs, dir, storage } = await open(1000);
    const data = bytes(5000, 4);
    const writer = await blobs.begin();
    // Not awaited one by one: writes that arrive while the file store's writer opens keep their order.
    await Promise.all([0, 1, 2, 3, 4].map((i) => writer.write(data.subarray(i * 1000, (i + 1) * 1000))));
    expect(await writer.commit('spilled-one')).toBe(true);
    expect(await filesIn(dir)).toEqual(['spilled-one']);
    expectBytes(await readAll(await blobs.get('spilled-one')), data);
    await storage.close();
  });

  it('refuses a limit that is not a whole number of bytes, and inline blobs with a blob store that signs URLs', async () => {
    const dir = join(root, `store-${++n}`);
    await expect(createSqliteStorage({ filename: join(dir, 'a.db'), blobs: createMemoryBlobStore(), inlineBlobBytes: 1.5 })).rejects.toThrow(
      /whole number/,
    );
    const signing: BlobStore = { ...createMemoryBlobStore(), signedUrl: async (key) => `https://bucket.example/${key}` };
    await expect(createSqliteStorage({ filename: ':memory:', blobs: signing, inlineBlobBytes: 64 })).rejects.toThrow(/sign/);
    // By default such a store gets no inline blobs; over a database that has some, it is refused: it would lose them.
    const plain = await createSqliteStorage({ filename: join(root, 'signing.db'), blobs: createMemoryBlobStore() });
    await put(plain.blobs, 'inline-one', bytes(10));
    await plain.close();
    await expect(createSqliteStorage({ filename: join(root, 'signing.db'), blobs: signing })).rejects.toThrow(/holds inline blobs/);
    const fresh = await createSqliteStorage({ filename: join(root, 'signing-fresh.db'), blobs: signing });
    expect(fresh.blobs).toBe(signing);
    await fresh.close();
  });
});
