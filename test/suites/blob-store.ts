// The one conformance suite every BlobStore runs (memory, fs, later S3).
// Each test gets a fresh store from `make`. Keys are valid for every store.
import { Buffer } from 'node:buffer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../storage/types.ts';

export interface BlobStoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

/** Deterministic bytes (not all equal, so ranges and reorderings show). */
export const bytes = (n: number, seed = 0) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

export async function readAll(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array | null> {
  if (!stream) return null;
  const parts: Uint8Array[] = [];
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Same bytes? Cheaper than toEqual on big arrays, and the failure says where they differ. */
export function expectBytes(actual: Uint8Array | null, expected: Uint8Array): void {
  expect(actual).not.toBeNull();
  const a = actual!;
  let i = 0;
  while (i < a.length && i < expected.length && a[i] === expected[i]) i++;
  expect({ length: a.length, firstDifference: i }).toEqual({ length: expected.length, firstDifference: expected.length });
}

export async function put(store: BlobStore, key: string, data: Uint8Array, chunkSize = 1000): Promise<boolean> {
  const writer = await store.begin();
  for (let i = 0; i < data.length; i += chunkSize) await writer.write(data.subarray(i, i + chunkSize));
  return writer.commit(key);
}

export function blobStoreSuite(name: string, make: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore conformance: ${name}`, () => {
    let store: BlobStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(() => cleanup());

    it('stores bytes written in several chunks', async () => {
      const data = bytes(200_000); // spans several read chunks of any sane store
      expect(await put(store, 'blob-one', data, 7777)).toBe(true);
      expect(await store.has('blob-one')).toBe(true);
      expectBytes(await readAll(await store.get('blob-one')), data);
    });

    it('stores an empty object', async () => {
      const writer = await store.begin();
      expect(await writer.commit('empty-one')).toBe(true);
      expectBytes(await readAll(await store.get('empty-one')), new Uint8Array(0));
    });

    it('does not keep a reference to the caller buffer', async () => {
      const chunk = bytes(100);
      const writer = await store.begin();
      await writer.write(chunk);
      chunk.fill(0);
      await writer.commit('copied-one');
      expectBytes(await readAll(await store.get('copied-one')), bytes(100));
    });

    it('does not keep a reference to a Buffer chunk either (whose slice() is a view)', async () => {
      const chunk = Buffer.from(bytes(100, 5));
      const writer = await store.begin();
      await writer.write(chunk);
      chunk.fill(0);
      await writer.commit('copied-two');
      expectBytes(await readAll(await store.get('copied-two')), bytes(100, 5));
    });

    it('returns inclusive byte ranges', async () => {
      const data = bytes(150_000);
      await put(store, 'ranged-one', data, 999);
      const range = async (start: number, end: number) => readAll(await store.get('ranged-one', { start, end }));
      expectBytes(await range(0, 0), data.subarray(0, 1));
      expectBytes(await range(149_999, 149_999), data.subarray(149_999));
      expectBytes(await range(998, 1000), data.subarray(998, 1001)); // across written chunks
      expectBytes(await range(10_000, 140_000), data.subarray(10_000, 140_001));
      expectBytes(await range(0, 149_999), data);
      expectBytes(await range(149_000, 10_000_000), data.subarray(149_000)); // end clamped
      expectBytes(await range(150_000, 150_010), new Uint8Array(0)); // start past the end
    });

    it('rejects malformed ranges', async () => {
      await put(store, 'ranged-two', bytes(10));
      await expect(store.get('ranged-two', { start: 5, end: 2 })).rejects.toThrow(RangeError);
      await expect(store.get('ranged-two', { start: -1, end: 2 })).rejects.toThrow(RangeError);
    });

    it('a commit of an existing key returns false and keeps the original', async () => {
      await put(store, 'taken-one', bytes(50, 1));
      expect(await put(store, 'taken-one', bytes(80, 2))).toBe(false);
      expectBytes(await readAll(await store.get('taken-one')), bytes(50, 1));
    });

    it('exactly one of concurrent commits of a key wins', async () => {
      const writers = await Promise.all([1, 2, 3, 4, 5].map(() => store.begin()));
      await Promise.all(writers.map((w, i) => w.write(bytes(5000, i))));
      const results = await Promise.all(writers.map((w) => w.commit('raced-one')));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expectBytes(await readAll(await store.get('raced-one')), bytes(5000, winner));
    });

    it('abort leaves nothing and may be called again', async () => {
      const writer = await store.begin();
      await writer.write(bytes(100));
      await writer.abort();
      await writer.abort();
      await expect(writer.write(bytes(1))).rejects.toThrow();
      await expect(writer.commit('aborted-one')).rejects.toThrow();
      expect(await store.has('aborted-one')).toBe(false);
      expect(await store.get('aborted-one')).toBeNull();
    });

    it('abort after commit keeps the committed object', async () => {
      const writer = await store.begin();
      await writer.write(bytes(100));
      await writer.commit('kept-one');
      await writer.abort(); // the usual `finally { abort() }` must be harmless
      expectBytes(await readAll(await store.get('kept-one')), bytes(100));
      await expect(writer.write(bytes(1))).rejects.toThrow();
    });

    it('delete removes the object; deleting a missing key is fine', async () => {
      await put(store, 'gone-one', bytes(10));
      await store.delete('gone-one');
      expect(await store.has('gone-one')).toBe(false);
      expect(await store.get('gone-one')).toBeNull();
      await store.delete('gone-one');
      expect(await put(store, 'gone-one', bytes(20))).toBe(true); // the key is free again
    });

    it('lists its committed objects, with when they were written; not temporaries, not deleted ones', async () => {
      if (!store.list) return;
      const before = Date.now() - 1000;
      await put(store, 'listed-one', bytes(3));
      await put(store, 'listed-two', bytes(4));
      await put(store, 'listed-gone', bytes(5));
      await store.delete('listed-gone');
      const pending = await store.begin();
      await pending.write(bytes(6));
      const listed = [];
      for await (const o of store.list()) listed.push(o);
      expect(listed.map((o) => o.key).sort()).toEqual(['listed-one', 'listed-two']);
      for (const o of listed) expect(o.modified_at).toBeGreaterThanOrEqual(before);
      await pending.abort();
    });

    it('a missing key has nothing', async () => {
      expect(await store.has('missing-one')).toBe(false);
      expect(await store.get('missing-one')).toBeNull();
      expect(await store.get('missing-one', { start: 0, end: 1 })).toBeNull();
    });
  });
}
