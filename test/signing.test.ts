// Signed URLs (core/signing.ts): the synchronous hash-wasm HMAC gives exactly
// WebCrypto's signature, verification accepts it, and the expiry grid.
import { describe, expect, it } from 'vitest';
import { formEncode } from '../core/assets/view.ts';
import { createUrlSigner, signedUrlExpiry } from '../core/signing.ts';

const SECRET = 'a-secret-of-reasonable-length-0123456789';

async function webCryptoSig(secret: string, subject: string, exp: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const bytes = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(`${subject}\n${exp}`)));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

describe('url signer', () => {
  it('signs exactly as HMAC-SHA256 over WebCrypto, for short, long and non-ASCII keys and subjects', async () => {
    for (const secret of [SECRET, 'k', 'ключ-🔑'.repeat(20)]) {
      const signer = await createUrlSigner(secret);
      for (const subject of ['asset:alice:1', 'asset:ünï:çødé', 'x'.repeat(300)]) {
        for (const expMs of [1_900_000_000_000, 1_900_000_000_999, 1_900_000_060_000]) {
          const params = signer.sign(subject, expMs);
          const exp = String(Math.floor(expMs / 1000));
          expect(params.get('exp')).toBe(exp);
          expect(params.get('sig')).toBe(await webCryptoSig(secret, subject, exp));
          // Twice: the second answer comes from the cache.
          expect(signer.sign(subject, expMs).toString()).toBe(params.toString());
          expect(signer.signQuery(subject, expMs)).toBe(params.toString());
        }
      }
    }
  });

  it('verifies its own signatures until they expire, and nothing else', async () => {
    const signer = await createUrlSigner(SECRET);
    const other = await createUrlSigner(`${SECRET}!`);
    const exp = 1_900_000_000_000;
    const params = signer.sign('asset:a:1', exp);
    expect(await signer.verify('asset:a:1', params, exp - 1)).toBe(true);
    expect(await signer.verify('asset:a:1', params, exp)).toBe(false);
    expect(await signer.verify('asset:a:2', params, exp - 1)).toBe(false);
    expect(await other.verify('asset:a:1', params, exp - 1)).toBe(false);
    const tampered = new URLSearchParams(params);
    tampered.set('exp', String(Number(params.get('exp')) + 1));
    expect(await signer.verify('asset:a:1', tampered, exp - 1)).toBe(false);
  });

  it('keeps signing correctly past the cache bound', async () => {
    const signer = await createUrlSigner(SECRET);
    const exp = 1_900_000_000_000;
    const first = signer.sign('asset:a:0', exp).get('sig');
    for (let i = 1; i < 5000; i++) signer.sign(`asset:a:${i}`, exp);
    expect(signer.sign('asset:a:0', exp).get('sig')).toBe(first);
    expect(first).toBe(await webCryptoSig(SECRET, 'asset:a:0', '1900000000'));
  });
});

describe('signedUrlExpiry', () => {
  const t0 = Date.parse('2030-01-01T00:00:00.000Z');

  it('rounds now + ttl up to the next whole minute for an hour-long ttl', () => {
    expect(signedUrlExpiry(t0, 3600)).toBe(t0 + 3600_000);
    expect(signedUrlExpiry(t0 + 1, 3600)).toBe(t0 + 3660_000);
    expect(signedUrlExpiry(t0 + 59_999, 3600)).toBe(t0 + 3660_000);
    expect(signedUrlExpiry(t0 + 60_000, 3600)).toBe(t0 + 3660_000);
  });

  it('gives a lifetime between ttl and ttl plus at most a minute (1/60 of short ttls), in whole seconds', () => {
    for (const ttl of [1, 5, 60, 90, 600, 3600, 86_400]) {
      const grid = Math.min(60_000, Math.max(1000, Math.floor(ttl / 60) * 1000));
      for (let i = 0; i < 200; i++) {
        const now = t0 + Math.floor(Math.random() * 10_000_000);
        const exp = signedUrlExpiry(now, ttl);
        expect(exp % 1000).toBe(0);
        expect(exp - now).toBeGreaterThanOrEqual(ttl * 1000);
        expect(exp - now).toBeLessThan(ttl * 1000 + grid);
      }
    }
  });
});

describe('formEncode', () => {
  it('encodes a query value exactly as URLSearchParams does', () => {
    const values = ['local', 'a b+c', "x!'()*~-._y", 'ünï/çødé?&=#%', '😀', 'lone \ud800 surrogate', '', '\u0000\u007f'];
    for (let c = 0; c < 256; c++) values.push(String.fromCharCode(c));
    for (const value of values) expect(formEncode(value), JSON.stringify(value)).toBe(new URLSearchParams({ v: value }).toString().slice(2));
  });
});
