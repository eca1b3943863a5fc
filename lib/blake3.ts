// blake3 (hash-wasm) computed while bytes stream, in the `blake3:<hex>` form
// the API speaks: uploads, job outputs and generated audio all hash this way.
import { createBLAKE3, type IHasher } from 'hash-wasm';

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
