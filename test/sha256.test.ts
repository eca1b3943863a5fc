// lib/sha256.ts: API keys and the local engine's cache keys are its digests, so
// they must be SHA-256 exactly, also when many are asked for at once.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../lib/sha256.ts';

const reference = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('sha256Hex', () => {
  it('is the SHA-256 of the UTF-8 text, in lower-case hex', async () => {
    for (const text of ['', 'abc', 'gr_live_0123456789', 'héllo wörld ✓ 🎨', 'x'.repeat(100_000)]) {
      expect(await sha256Hex(text)).toBe(reference(text));
    }
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('gives each of many concurrent calls its own digest', async () => {
    const texts = Array.from({ length: 200 }, (_, i) => `text ${i} ${'y'.repeat(i * 13)}`);
    expect(await Promise.all(texts.map(sha256Hex))).toEqual(texts.map(reference));
  });
});
