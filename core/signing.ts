// Short-lived signed URLs (HMAC-SHA256): a holder of the URL may fetch the
// bytes without any auth header until the URL expires.
//
// Signing happens on every read of an asset or a job's outputs, so it is made
// cheap: the HMAC is computed synchronously in WebAssembly (hash-wasm; the
// WebCrypto call is a round trip through a thread pool in Node), and expiries
// sit on a coarse grid (signedUrlExpiry) so the same (subject, expiry) pair
// recurs and its signature comes from a small cache. Verification, rarer and
// where timing matters, stays on WebCrypto's constant-time verify.
import { createHMAC, createSHA256, type IHasher } from 'hash-wasm';

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Longest step of the expiry grid. */
const MAX_GRID_MS = 60_000;
/** Signatures kept; one per asset read in the current grid step is plenty. */
const SIGNATURE_CACHE_SIZE = 4096;

/**
 * The expiry of a URL signed at `nowMs` to live `ttlSeconds`: now + ttl
 * rounded UP to a grid of whole seconds, one minute for TTLs of an hour or
 * more and ttl/60 below that. A URL thus lives between ttl and ttl + 1/60 of
 * it (at most a minute more), and every read within one grid step gets the
 * same expiry, hence the same signature, which is then cached.
 */
export function signedUrlExpiry(nowMs: number, ttlSeconds: number): number {
  const ttlMs = ttlSeconds * 1000;
  const grid = Math.min(MAX_GRID_MS, Math.max(1000, Math.floor(ttlMs / 60 / 1000) * 1000));
  return Math.ceil((nowMs + ttlMs) / grid) * grid;
}

export interface UrlSigner {
  /** Query parameters (`exp`, `sig`) that authorise `subject` until `expiresAtMs` (whole seconds, rounded down). */
  sign(subject: string, expiresAtMs: number): URLSearchParams;
  /** The same as `sign(...).toString()`: `exp=<seconds>&sig=<signature>`, without building the parameters. */
  signQuery(subject: string, expiresAtMs: number): string;
  /** True when the parameters are a valid, unexpired signature of `subject`. */
  verify(subject: string, params: URLSearchParams, nowMs: number): Promise<boolean>;
}

export async function createUrlSigner(secret: string): Promise<UrlSigner> {
  const secretBytes = encoder.encode(secret);
  const key = await crypto.subtle.importKey('raw', secretBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  // One keyed hasher, reset per signature; all synchronous, so no two signatures interleave.
  const hmac: IHasher = await createHMAC(createSHA256(), secretBytes);
  const message = (subject: string, exp: string) => encoder.encode(`${subject}\n${exp}`);
  // LRU of `${subject}\n${exp}` -> signature; a Map iterates oldest first.
  const cache = new Map<string, string>();

  const signature = (subject: string, exp: string): string => {
    const id = `${subject}\n${exp}`;
    let sig = cache.get(id);
    if (sig !== undefined) {
      cache.delete(id);
    } else {
      sig = base64url(hmac.init().update(message(subject, exp)).digest('binary'));
      if (cache.size >= SIGNATURE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(id, sig);
    return sig;
  };

  return {
    sign(subject, expiresAtMs) {
      const exp = String(Math.floor(expiresAtMs / 1000));
      return new URLSearchParams({ exp, sig: signature(subject, exp) });
    },
    signQuery(subject, expiresAtMs) {
      const exp = String(Math.floor(expiresAtMs / 1000));
      // Digits and base64url need no escaping.
      return `exp=${exp}&sig=${signature(subject, exp)}`;
    },
    async verify(subject, params, nowMs) {
      const exp = params.get('exp');
      const sig = params.get('sig');
      if (!exp || !sig || !/^\d{1,12}$/.test(exp) || Number(exp) * 1000 <= nowMs) return false;
      if (!/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
      const raw = Uint8Array.from(atob(`${sig.replace(/-/g, '+').replace(/_/g, '/')}=`), (c) => c.charCodeAt(0));
      // Only the canonical spelling counts: the last character has unused low bits.
      if (base64url(raw) !== sig) return false;
      // verify() compares in constant time.
      return crypto.subtle.verify('HMAC', key, raw, message(subject, exp));
    },
  };
}

/** A random secret for deployments that do not configure one. */
export function randomSecret(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}
