// blake3 (hash-wasm) computed while bytes stream, and the `blake3:<hex>` form
// the API speaks. SHA-256 (WebCrypto) for API keys, which are stored only hashed.
import { createBLAKE3, type IHasher } from 'hash-wasm';

export const HASH_PATTERN = /^blake3:[0-9a-f]{64}$/;

/** Normalises a client-written hash (`blake3:<hex>`, any case) or returns null. */
export function parseHash(value: string): string | null {
  const lower = value.trim().toLowerCase();
  return HASH_PATTERN.test(lower) ? lower : null;
}

/**
 * blake3 over a stream of chunks. `update` may return a promise when the
 * hasher wants the caller to wait (work queued elsewhere, e.g. a worker
 * thread); `digest` gives the `blake3:<hex>` form.
 */
export interface StreamHasher {
  update(chunk: Uint8Array): void | Promise<void>;
  digest(): Promise<string>;
  /** Releases the state of a hash that will not be finished (a failed upload). */
  abort?(): void;
}

/** Makes a hasher per upload; runtimes may supply one that hashes off the request thread. */
export type HasherFactory = () => Promise<StreamHasher>;

/** The default: hash-wasm on the calling thread, available on every runtime. */
export const createHasher: HasherFactory = async () => {
  const hasher: IHasher = await createBLAKE3();
  hasher.init();
  return {
    update: (chunk) => void hasher.update(chunk),
    digest: async () => `blake3:${hasher.digest('hex')}`,
  };
};

/** The blob store key for a hash: its hex digest, which is path- and URL-safe. */
export const blobKeyOf = (hash: string) => hash.slice('blake3:'.length);

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export const apiKeyHash = async (key: string) => `sha256:${await sha256Hex(key)}`;
