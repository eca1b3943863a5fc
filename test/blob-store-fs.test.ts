// The fs blob store: the shared conformance suite, plus what only a disk
// store can get wrong (temp files, crash leftovers, layout, path escapes).
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFsBlobStore, type FsBlobStore } from '../storage/fs/blob-store.ts';
import { blobStoreSuite, bytes, put, readAll } from './suites/blob-store.ts';

let root: string;
let n = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'graphrun-blobs-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

blobStoreSuite('fs', async () => {
  const store = await createFsBlobStore({ dir: join(root, `suite-${++n}`) });
  return {
    store,
    // Every test must leave no temporary object behind.
    cleanup: async () => expect(await store.tempCount()).toBe(0),
  };
});

describe('fs blob store specifics', () => {
  let dir: string;
  let store: FsBlobStore;
  beforeEach(async () => {
    dir = join(root, `own-${++n}`);
    store = await createFsBlobStore({ dir });
  });

  it('keeps no temp file after commit, dedup or abort', async () => {
    const writer = await store.begin();
    await writer.write(bytes(10));
    expect(await store.tempCount()).toBe(1);
    await writer.abort();
    expect(await store.tempCount()).toBe(0);
    await put(store, 'abcd1234', bytes(10));
    await put(store, 'abcd1234', bytes(10));
    expect(await store.tempCount()).toBe(0);
  });

  it('removes temp files a crash left behind when it starts', async () => {
    await writeFile(join(dir, '.tmp', 'leftover'), 'partial upload');
    expect(await store.tempCount()).toBe(1);
    const restarted = await createFsBlobStore({ dir });
    expect(await restarted.tempCount()).toBe(0);
  });

  it('lays objects out as dir/ab/cd/<key>', async () => {
    await put(store, 'abcdef0123', bytes(33));
    expect((await stat(join(dir, 'ab', 'cd', 'abcdef0123'))).size).toBe(33);
    expect((await readdir(dir)).sort()).toEqual(['.tmp', 'ab']);
  });

  it('concurrent commits into one new prefix directory all land', async () => {
    const keys = ['ffee0001', 'ffee0002', 'ffee0003', 'ffef0004'];
    const results = await Promise.all(keys.map((k, i) => put(store, k, bytes(10 + i))));
    expect(results).toEqual([true, true, true, true]);
    for (const [i, k] of keys.entries()) expect((await stat(join(dir, k.slice(0, 2), k.slice(2, 4), k))).size).toBe(10 + i);
    expect(await store.tempCount()).toBe(0);
  });

  it('makes a prefix directory again when it was removed behind its back', async () => {
    await put(store, 'abce0001', bytes(5));
    await rm(join(dir, 'ab'), { recursive: true });
    expect(await put(store, 'abce0002', bytes(6))).toBe(true);
    expect((await stat(join(dir, 'ab', 'ce', 'abce0002'))).size).toBe(6);
    expect(await store.tempCount()).toBe(0);
  });

  it('stores a blob of one batch and one of several alike', async () => {
    const small = bytes(1500);
    const large = bytes(3 * 1024 * 1024 + 7);
    expect(await put(store, 'aaaa0001', small)).toBe(true);
    expect(await put(store, 'aaaa0002', large, 64 * 1024)).toBe(true);
    // Compared as buffers: a deep equal of 3 MB element by element takes seconds.
    expect(Buffer.from((await readAll(await store.get('aaaa0001')))!).equals(small)).toBe(true);
    expect(Buffer.from((await readAll(await store.get('aaaa0002')))!).equals(large)).toBe(true);
    expect(await store.tempCount()).toBe(0);
  });

  it('rejects keys that could name another path', async () => {
    const bad = ['', 'abc', '../../etc/passwd', 'ab/cd/ef', 'ab\\cd', '.tmp', 'abcd.txt', 'x'.repeat(129), 'abc\u0000d'];
    for (const key of bad) {
      await expect(store.get(key), key).rejects.toThrow(TypeError);
      await expect(store.has(key), key).rejects.toThrow(TypeError);
      await expect(store.delete(key), key).rejects.toThrow(TypeError);
      const writer = await store.begin();
      await expect(writer.commit(key), key).rejects.toThrow(TypeError);
      expect(await writer.commit('valid_KEY-1'), 'writer still usable').toBe(true);
      await store.delete('valid_KEY-1');
    }
    expect(await store.tempCount()).toBe(0);
  });

  it('a stream cancelled early releases the file', async () => {
    await put(store, 'abcd5678', bytes(300_000));
    const stream = (await store.get('abcd5678'))!;
    const reader = stream.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    await store.delete('abcd5678');
    expect(await readAll(await store.get('abcd5678'))).toBeNull();
  });
});
