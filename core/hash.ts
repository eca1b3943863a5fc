// The `blake3:<hex>` form the API speaks (computed by lib/blake3.ts) and the
// blob keys made of it. SHA-256 (WebCrypto) for API keys, which are stored
// only hashed.

export const HASH_PATTERN = /^blake3:[0-9a-f]{64}$/;

/** Normalises a client-written hash (`blake3:<hex>`, any case) or returns null. */
export function parseHash(value: string): string | null {
  const lower = value.trim().toLowerCase();
  return HASH_PATTERN.test(lower) ? lower : null;
}

/** The blob store key for a hash: its hex digest, which is path- and URL-safe. */
export const blobKeyOf = (hash: string) => hash.slice('blake3:'.length);

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export const apiKeyHash = async (key: string) => `sha256:${await sha256Hex(key)}`;
