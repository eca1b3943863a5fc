// The BlobWriter of the fs store: bytes go to an open temp file; commit makes
// them durable and hands over to `publish`, which links them under the key.
import { unlink, type FileHandle } from 'node:fs/promises';
import type { BlobWriter } from '../types.ts';

const ignoreEnoent = (e: unknown) => {
  if ((e as NodeJS.ErrnoException | null)?.code !== 'ENOENT') throw e;
};

/** A writer over an open temp file; `publish` links it under its key. */
export function createTempWriter(
  fh: FileHandle,
  tmpPath: string,
  checkKey: (key: string) => void,
  publish: (key: string) => Promise<boolean>,
): BlobWriter {
  // Writes are chained so a caller that forgets to await cannot interleave them.
  let queue: Promise<void> = Promise.resolve();
  let state: 'open' | 'committing' | 'done' = 'open';
  let committing: Promise<boolean> | undefined;
  let aborting: Promise<void> | undefined;
  const ensureOpen = () => {
    if (state !== 'open') throw new Error('blob writer is closed');
  };

  return {
    async write(chunk) {
      ensureOpen();
      queue = queue.then(async () => {
        for (let off = 0; off < chunk.length; ) {
          off += (await fh.write(chunk, off, chunk.length - off)).bytesWritten;
        }
      });
      return queue;
    },

    async commit(key) {
      checkKey(key); // before any state change: a bad key leaves the writer usable
      ensureOpen();
      state = 'committing';
      committing = (async () => {
        await queue;
        await fh.sync();
        await fh.close();
        const created = await publish(key);
        await unlink(tmpPath);
        state = 'done';
        return created;
      })();
      return committing;
    },

    abort() {
      // A failed commit leaves state 'committing': abort then still cleans up.
      return (aborting ??= (async () => {
        await committing?.catch(() => {});
        if (state === 'done') return;
        state = 'done';
        await queue.catch(() => {});
        await fh.close().catch(() => {});
        await unlink(tmpPath).catch(ignoreEnoent);
      })());
    },
  };
}
