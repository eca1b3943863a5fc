// The fs blob store: the shared conformance suite, plus what only a disk
// store can get wrong (temp files, crash leftovers, layout and its migration,
// path escapes).
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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
    cleanup: async () => {
      expect(await store.tempCount()).toBe(0);
      await store.close();
    },
  };
});

describe('fs blob store specifics', () => {
  let dir: string;
  let store: FsBlobStore;
  beforeEach(async () => {
    dir = join(root, `own-${++n}`);
    store = await createFsBlobStore({ dir });
  });
  afterEach(() => store.close());

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

  it('lays objects out as dir/ab/<key>, a new store marked flat at once', async () => {
    expect(await readFile(join(dir, '.layout'), 'utf8')).toBe('flat');
    await put(store, 'abcdef0123', bytes(33));
    expect((await stat(join(dir, 'ab', 'abcdef0123'))).size).toBe(33);
    expect((await readdir(dir)).sort()).toEqual(['.layout', '.tmp', 'ab']);
    expect(await readdir(join(dir, 'ab'))).toEqual(['abcdef0123']);
  });

  it('concurrent commits into one new prefix directory all land', async () => {
    const keys = ['ffee0001', 'ffee0002', 'ffee0003', 'ffef0004'];
    const results = await Promise.all(keys.map((k, i) => put(store, k, bytes(10 + i))));
    expect(results).toEqual([true, true, true, true]);
    for (const [i, k] of keys.entries()) expect((await stat(join(dir, k.slice(0, 2), k))).size).toBe(10 + i);
    expect(await store.tempCount()).toBe(0);
  });

  it('makes a prefix directory again when it was removed behind its back', async () => {
    await put(store, 'abce0001', bytes(5));
    await rm(join(dir, 'ab'), { recursive: true });
    expect(await put(store, 'abce0002', bytes(6))).toBe(true);
    expect((await stat(join(dir, 'ab', 'abce0002'))).size).toBe(6);
    expect(await store.tempCount()).toBe(0);
  });

  // Linux shows what each descriptor of the process is open on, a removed directory as "<path> (deleted)".
  it.runIf(process.platform === 'linux')(
    'syncs each prefix directory through one handle, kept until close; a directory made again gets a new one',
    async () => {
      const handlesOn = async (path: string) => {
        const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
        return targets.filter((t) => t === path || t === `${path} (deleted)`);
      };
      const ab = join(dir, 'ab');
      for (let i = 0; i < 5; i++) expect(await put(store, `abcf000${i}`, bytes(5 + i))).toBe(true);
      await put(store, 'cdcf0001', bytes(3));
      expect(await handlesOn(ab)).toEqual([ab]);
      expect(await handlesOn(join(dir, 'cd'))).toEqual([join(dir, 'cd')]);
      await rm(ab, { recursive: true });
      expect(await put(store, 'abcf0009', bytes(9))).toBe(true);
      // The old handle is let go of, and the live directory has its own.
      expect(await handlesOn(ab)).toEqual([ab]);
      await store.close();
      expect(await handlesOn(ab)).toEqual([]);
      expect(await handlesOn(join(dir, 'cd'))).toEqual([]);
    },
  );

  it("opens each writer's temp file ahead, when the writer before begins; it is no writer's until taken, and close removes it", async () => {
    const inTmp = async () => (await readdir(join(dir, '.tmp'))).map((name) => join(dir, '.tmp', name));
    expect(await put(store, 'abcd0001', bytes(8))).toBe(true);
    const [ahead] = await inTmp();
    expect(await inTmp()).toEqual([ahead]);
    expect(await store.tempFiles()).toEqual([]);
    const writer = await store.begin();
    // The writer took the file opened for it, and another waits for the next one.
    expect(await store.tempFiles()).toEqual([ahead]);
    expect(await inTmp()).toHaveLength(2);
    await writer.write(bytes(9));
    expect(await writer.commit('abcd0002')).toBe(true);
    expect(await readFile(join(dir, 'ab', 'abcd0002'))).toEqual(Buffer.from(bytes(9)));
    expect(await store.tempFiles()).toEqual([]);
    await store.close();
    expect(await inTmp()).toEqual([]);
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

/** Keys as the service makes them (blake3 hex); `hex(0xab, 0xcd, 1)` starts `abcd`. */
const hex = (a: number, b: number, n: number) => [a, b, n].map((x) => x.toString(16).padStart(2, '0')).join('') + '0'.repeat(58);
const legacyPath = (dir: string, key: string) => join(dir, key.slice(0, 2), key.slice(2, 4), key);
const flatPath = (dir: string, key: string) => join(dir, key.slice(0, 2), key);
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Writes `data` by hand at `path`, as an older store (or an earlier, interrupted open) left it. */
async function place(path: string, data: Uint8Array): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, data);
}

async function listed(store: FsBlobStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const { key } of store.list!()) keys.push(key);
  return keys.sort();
}

async function expectObjects(store: FsBlobStore, dir: string, objects: Map<string, Uint8Array>): Promise<void> {
  for (const [key, data] of objects) {
    expect(await store.has(key), key).toBe(true);
    expect(Buffer.from((await readAll(await store.get(key)))!).equals(data), key).toBe(true);
    expect((await readFile(flatPath(dir, key))).equals(data), key).toBe(true);
    expect(await exists(legacyPath(dir, key)), key).toBe(false);
  }
  expect(await listed(store)).toEqual([...objects.keys()].sort());
}

describe('fs blob store: a store of the dir/ab/cd/<key> layout', () => {
  let dir: string;
  beforeEach(() => {
    dir = join(root, `legacy-${++n}`);
  });

  it('moves every object to dir/ab/<key> at open, byte for byte, and marks the store flat', async () => {
    const objects = new Map([
      [hex(0xab, 0xcd, 1), bytes(150, 1)],
      [hex(0xab, 0xcd, 2), bytes(0)],
      [hex(0xab, 0xef, 3), bytes(70_000, 3)],
      [hex(0x12, 0xff, 4), bytes(10, 4)],
    ]);
    for (const [key, data] of objects) await place(legacyPath(dir, key), data);
    // Not objects: a stray file, and key-like names where their keys never led; all stay (and so does their leaf).
    await place(join(dir, '12', 'ff', 'notes.txt'), bytes(5));
    await place(join(dir, '12', 'ff', hex(0x99, 0x99, 9)), bytes(5));
    await mkdir(join(dir, '77', '88'), { recursive: true });
    await place(join(dir, 'ab', hex(0x55, 0x55, 5)), bytes(5));

    const store = await createFsBlobStore({ dir });
    await expectObjects(store, dir, objects);
    expect(await readFile(join(dir, '.layout'), 'utf8')).toBe('flat');
    expect((await readdir(join(dir, 'ab'))).sort()).toEqual([hex(0x55, 0x55, 5), hex(0xab, 0xcd, 1), hex(0xab, 0xcd, 2), hex(0xab, 0xef, 3)]);
    expect(await readdir(join(dir, '77'))).toEqual([]);
    expect((await readdir(join(dir, '12'))).sort()).toEqual([hex(0x12, 0xff, 4), 'ff']);
    expect((await readdir(join(dir, '12', 'ff'))).sort()).toEqual([hex(0x99, 0x99, 9), 'notes.txt']);
    expect(await store.tempCount()).toBe(0);
  });

  it('finishes a move an earlier open left half done', async () => {
    const objects = new Map([
      [hex(0xab, 0xcd, 1), bytes(20, 1)],
      [hex(0xab, 0xcd, 2), bytes(21, 2)],
      [hex(0xab, 0x01, 3), bytes(22, 3)],
      [hex(0x34, 0x56, 4), bytes(23, 4)],
      [hex(0x34, 0x57, 5), bytes(24, 5)],
    ]);
    const keys = [...objects.keys()];
    // Already moved: one of a leaf, a whole leaf, one of another directory; and one in both places (same bytes).
    for (const key of [keys[0], keys[2], keys[3]]) await place(flatPath(dir, key), objects.get(key)!);
    for (const key of [keys[1], keys[4], keys[3]]) await place(legacyPath(dir, key), objects.get(key)!);

    const store = await createFsBlobStore({ dir });
    await expectObjects(store, dir, objects);
    expect(await readFile(join(dir, '.layout'), 'utf8')).toBe('flat');
    const leaves = [...(await readdir(join(dir, 'ab'))), ...(await readdir(join(dir, '34')))].filter((name) => name.length === 2);
    expect(leaves).toEqual([]);
  });

  it('a store once moved opens without touching anything, and works', async () => {
    const objects = new Map([
      [hex(0xab, 0xcd, 1), bytes(30, 1)],
      [hex(0xfe, 0xdc, 2), bytes(31, 2)],
    ]);
    for (const [key, data] of objects) await place(legacyPath(dir, key), data);
    await createFsBlobStore({ dir });
    const before = await Promise.all([join(dir, '.layout'), ...[...objects.keys()].map((k) => flatPath(dir, k))].map((p) => stat(p)));
    // Placed after the move: an open that looked for the old layout again would move it.
    const late = hex(0xab, 0xcd, 3);
    await place(legacyPath(dir, late), bytes(32, 3));

    const store = await createFsBlobStore({ dir });
    const after = await Promise.all([join(dir, '.layout'), ...[...objects.keys()].map((k) => flatPath(dir, k))].map((p) => stat(p)));
    expect(after.map((s) => [s.ino, s.mtimeMs, s.ctimeMs])).toEqual(before.map((s) => [s.ino, s.mtimeMs, s.ctimeMs]));
    expect(await exists(legacyPath(dir, late))).toBe(true);
    expect(await store.has(late)).toBe(false);
    await expectObjects(store, dir, objects);

    const fresh = hex(0xab, 0x00, 4);
    expect(await put(store, fresh, bytes(40, 4))).toBe(true);
    expect(await put(store, hex(0xab, 0xcd, 1), bytes(30, 1))).toBe(false);
    objects.set(fresh, bytes(40, 4));
    await expectObjects(store, dir, objects);
    await store.delete(hex(0xab, 0xcd, 1));
    objects.delete(hex(0xab, 0xcd, 1));
    await expectObjects(store, dir, objects);
    expect(await store.has(hex(0xab, 0xcd, 1))).toBe(false);
    expect(await store.tempCount()).toBe(0);
  });

  it('refuses a store marked with a layout it does not know', async () => {
    await place(flatPath(dir, hex(0xab, 0xcd, 1)), bytes(3));
    await writeFile(join(dir, '.layout'), 'sharded-3');
    await expect(createFsBlobStore({ dir })).rejects.toThrow(/unknown blob store layout/);
    expect(await readFile(join(dir, '.layout'), 'utf8')).toBe('sharded-3');
  });
});
