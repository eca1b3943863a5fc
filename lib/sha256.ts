// SHA-256 of short texts (API keys, cache keys of planned nodes) as hex.
import { createSHA256, type IHasher } from 'hash-wasm';

const encoder = new TextEncoder();
let hasher: Promise<IHasher> | undefined;

/**
 * WebCrypto's digest is a round trip through Node's thread pool (about 15 us
 * of CPU for a short text, most of it on the calling thread); the
 * WebAssembly hasher does it in about 2 us, synchronously, so one instance
 * serves every call (nothing can interleave between its init and digest).
 */
export async function sha256Hex(text: string): Promise<string> {
  // A failed load (no WebAssembly) is tried again on the next call, not remembered.
  const h = await (hasher ??= createSHA256().catch((err: unknown) => {
    hasher = undefined;
    throw err;
  }));
  return h.init().update(encoder.encode(text)).digest('hex');
}
