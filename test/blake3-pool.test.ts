// The core's hash-wasm hasher keeps finished WebAssembly instances for the
// next hash: every hash must still be its own, whatever was hashed, aborted
// or left half done before it on a reused instance, and a finished hasher
// must refuse more bytes instead of touching an instance handed on.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createNativeHasher } from '../adapters/node/native-hasher.ts';
import { createHasher, type StreamHasher } from '../lib/blake3.ts';

const reference = async (chunks: Uint8Array[]) => {
  const h = await createNativeHasher();
  for (const c of chunks) await h.update(c);
  return h.digest();
};

const pieces = (n: number) => Array.from({ length: n }, (_, i) => new Uint8Array(randomBytes(100 + i * 333)));

describe('hash-wasm hashers, reused', () => {
  it('hashes interleaved, aborted and finished ones each on their own, over many rounds', async () => {
    for (let round = 0; round < 20; round++) {
      const streams = Array.from({ length: 12 }, () => pieces(1 + (round % 4)));
      const hashers: StreamHasher[] = await Promise.all(streams.map(() => createHasher()));
      // Interleaved: every hasher takes its first piece before any takes its second.
      for (let i = 0; i < 4; i++) for (const [k, h] of hashers.entries()) if (streams[k][i]) await h.update(streams[k][i]);
      // Some are given up half way: their instances go back with bytes in them.
      for (const k of [1, 5, 9]) hashers[k].abort?.();
      for (const [k, h] of hashers.entries()) {
        if (k % 4 === 1) continue;
        expect(await h.digest()).toBe(await reference(streams[k]));
      }
    }
  });

  it('a finished hasher refuses more bytes and a second digest', async () => {
    const h = await createHasher();
    await h.update(new Uint8Array([1, 2, 3]));
    await h.digest();
    const next = await createHasher();
    expect(() => h.update(new Uint8Array([4]))).toThrow(/finished/);
    await expect(h.digest()).rejects.toThrow(/finished/);
    // The instance it gave back hashes for its new owner untouched.
    await next.update(new Uint8Array([9]));
    expect(await next.digest()).toBe(await reference([new Uint8Array([9])]));
  });

  it('an aborted hasher refuses more bytes; aborting twice gives its instance back once', async () => {
    // Every kept instance taken first, so what h gives back is all there is to take.
    const held = await Promise.all(Array.from({ length: 16 }, () => createHasher()));
    const h = await createHasher();
    await h.update(new Uint8Array([1]));
    h.abort?.();
    h.abort?.();
    expect(() => h.update(new Uint8Array([2]))).toThrow(/finished/);
    const [a, b] = await Promise.all([createHasher(), createHasher()]);
    await a.update(new Uint8Array([7]));
    await b.update(new Uint8Array([8]));
    expect([await a.digest(), await b.digest()]).toEqual([await reference([new Uint8Array([7])]), await reference([new Uint8Array([8])])]);
    for (const x of held) x.abort?.();
  });
});
