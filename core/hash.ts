// The `blake3:<hex>` form the API speaks (computed by lib/blake3.ts) and the
// blob keys made of it. SHA-256 for API keys, which are stored only hashed.
import { createSHA256, type IHasher } from 'hash-wasm';

export const HASH_PATTERN = /^blake3:[0-9a-f]{64}$/;

/** Normalises a client-written hash (`blake3:<hex>`, any case) or returns null. */
export function parseHash(value: string): string | null {
  const lower = value.trim().toLowerCase();
  return HASH_PATTERN.test(lower) ? lower : null;
}

/** The blob store key for a hash: its hex digest, which is path- and URL-safe. */
export const blobKeyOf = (hash: string) => hash.slice('blake3:'.length);

const encoder = new TextEncoder();
let sha256: Promise<IHasher> | undefined;

/**
 * Every request that presents an API key hashes it. WebCrypto's digest is a
 * round trip through Node's thread pool (about 15 us of CPU for a key); the
 * WebAssembly hasher does it in about 2 us, synchronously, so one instance
 * serves every call (nothing can interleave between its init and digest).
 */
export async function sha256Hex(text: string): Promise<string> {
  // A failed load (no WebAssembly) is tried again on the next call, not remembered.
  const hasher = await (sha256 ??= createSHA256().catch((err: unknown) => {
    sha256 = undefined;
    throw err;
  }));
  return hasher.init().update(encoder.encode(text)).digest('hex');
}

export const apiKeyHash = async (key: string) => `sha256:${await sha256Hex(key)}`;
