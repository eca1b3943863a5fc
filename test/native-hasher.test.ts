// The Node adapter's native blake3 (@napi-rs/blake-hash) against the core's
// hash-wasm default: the same `blake3:<hex>` for any input and any chunking,
// and an upload through the service with it stores the bytes under that hash.
import { afterEach, describe, expect, it } from 'vitest';
import { createNativeHasher } from '../adapters/node/native-hasher.ts';
import { createHasher } from '../lib/blake3.ts';
import { blake3Of, randomBytes, upload } from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

async function digestOf(factory: typeof createHasher, chunks: Uint8Array[]): Promise<string> {
  const hasher = await factory();
  for (const chunk of chunks) await hasher.update(chunk);
  return hasher.digest();
}

/** `bytes` cut into pieces of the given sizes in turn (the last piece takes the rest). */
function cut(bytes: Uint8Array, sizes: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length];
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

describe('native blake3 hasher', () => {
  const cases: Array<[string, Uint8Array[]]> = [
    ['empty input', []],
    ['an empty chunk', [new Uint8Array(0)]],
    ['a small input', [new TextEncoder().encode('hello, assets')]],
    // 1024 is blake3's chunk size: pieces around it cross its boundaries every way.
    ['multi-chunk, odd pieces', cut(randomBytes(300_000), [1, 1023, 1024, 1025, 7, 65_536, 0])],
    ['a view into a larger buffer', [randomBytes(10_000).subarray(123, 9_000)]],
    ['8 MiB of random bytes in 64 KiB chunks', cut(randomBytes(8 * 1024 * 1024), [64 * 1024])],
    ['8 MiB of random bytes in one call', [randomBytes(8 * 1024 * 1024)]],
  ];

  it.each(cases)('gives the same blake3:<hex> as hash-wasm for %s', async (_name, chunks) => {
    const native = await digestOf(createNativeHasher, chunks);
    expect(native).toMatch(/^blake3:[0-9a-f]{64}$/);
    expect(native).toBe(await digestOf(createHasher, chunks));
  });

  it('the known blake3 of the empty input', async () => {
    expect(await digestOf(createNativeHasher, [])).toBe('blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
  });

  it('keeps no state between uploads', async () => {
    const a = await createNativeHasher();
    const b = await createNativeHasher();
    a.update(new TextEncoder().encode('one'));
    expect(await b.digest()).toBe(await digestOf(createHasher, []));
  });
});

describe.each(MODES)('uploads with the native hasher (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => h?.close());

  it('stores the bytes under the same hash hash-wasm computes, and dedups on it', async () => {
    h = await startHarness(mode, { hasher: createNativeHasher });
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const first = await upload(h, bytes);
    expect(first.res.status).toBe(201);
    expect((first.body as { hash: string }).hash).toBe(await blake3Of(bytes));
    const again = await upload(h, bytes);
    expect(again.res.status).toBe(200);
  });
});
