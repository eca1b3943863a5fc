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

/**
 * hash-wasm makes a WebAssembly instance per createBLAKE3 (about 0.15 ms of
 * CPU, more than hashing a job's image): finished ones are kept for the next
 * hash, init() resetting their state. Bounded: a burst of uploads leaves a
 * few, not one per upload.
 */
const IDLE_MAX = 8;
const idle: IHasher[] = [];

/** The default: hash-wasm on the calling thread, available on every runtime. */
export const createHasher: HasherFactory = async () => {
  const hasher: IHasher = idle.pop() ?? (await createBLAKE3());
  hasher.init();
  let done = false;
  /** Back to the idle ones, once: a hasher handed out twice would mix two streams. */
  const release = () => {
    if (done) return;
    done = true;
    if (idle.length < IDLE_MAX) idle.push(hasher);
  };
  return {
    update(chunk) {
      if (done) throw new Error('the hash is finished');
      hasher.update(chunk);
    },
    async digest() {
      if (done) throw new Error('the hash is finished');
      try {
        return `blake3:${hasher.digest('hex')}`;
      } finally {
        release();
      }
    },
    abort: release,
  };
};
