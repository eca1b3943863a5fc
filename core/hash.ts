// The `blake3:<hex>` form the API speaks (computed by lib/blake3.ts) and the
// blob keys made of it; API keys are stored only as their SHA-256 (lib/sha256.ts).
import { sha256Hex } from '../lib/sha256.ts';

export const HASH_PATTERN = /^blake3:[0-9a-f]{64}$/;

/** Normalises a client-written hash (`blake3:<hex>`, any case) or returns null. */
export function parseHash(value: string): string | null {
  const lower = value.trim().toLowerCase();
  return HASH_PATTERN.test(lower) ? lower : null;
}

/** The blob store key for a hash: its hex digest, which is path- and URL-safe. */
export const blobKeyOf = (hash: string) => hash.slice('blake3:'.length);

export const apiKeyHash = async (key: string) => `sha256:${await sha256Hex(key)}`;
