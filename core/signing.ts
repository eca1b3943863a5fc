// Short-lived signed URLs (HMAC-SHA256 over WebCrypto): a holder of the URL
// may fetch the bytes without any auth header until the URL expires.
const encoder = new TextEncoder();

function base64url(bytes: ArrayBuffer): string {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export interface UrlSigner {
  /** Query parameters that authorise `subject` until `expiresAtMs`. */
  sign(subject: string, expiresAtMs: number): Promise<URLSearchParams>;
  /** True when the parameters are a valid, unexpired signature of `subject`. */
  verify(subject: string, params: URLSearchParams, nowMs: number): Promise<boolean>;
}

export async function createUrlSigner(secret: string): Promise<UrlSigner> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );
  const message = (subject: string, exp: string) => encoder.encode(`${subject}\n${exp}`);

  return {
    async sign(subject, expiresAtMs) {
      const exp = String(Math.floor(expiresAtMs / 1000));
      const sig = base64url(await crypto.subtle.sign('HMAC', key, message(subject, exp)));
      return new URLSearchParams({ exp, sig });
    },
    async verify(subject, params, nowMs) {
      const exp = params.get('exp');
      const sig = params.get('sig');
      if (!exp || !sig || !/^\d{1,12}$/.test(exp) || Number(exp) * 1000 <= nowMs) return false;
      if (!/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
      const raw = Uint8Array.from(atob(sig.replace(/-/g, '+').replace(/_/g, '/') + '='), (c) => c.charCodeAt(0));
      // Only the canonical spelling counts: the last character has unused low bits.
      if (base64url(raw.buffer) !== sig) return false;
      // verify() compares in constant time.
      return crypto.subtle.verify('HMAC', key, raw, message(subject, exp));
    },
  };
}

/** A random secret for deployments that do not configure one. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return base64url(bytes.buffer);
}
