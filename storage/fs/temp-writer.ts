// The BlobWriter of the fs store: bytes go to a temp file; commit makes them
// durable and hands over to `publish`, which links them under the key and
// removes the temp file.
import { unlink } from 'node:fs/promises';
import type { BlobWriter } from '../types.ts';
import type { OpenFile } from './fd-file.ts';

const BATCH_BYTES = 1024 * 1024;
/**
 * The first batch's size: it doubles up to BATCH_BYTES as bytes come. Most
 * blobs (a job's image, a small upload) are far smaller than a batch, and a
 * zeroed 1 MiB per writer cost more than writing them (its fill, and the
 * collections such allocations bring on).
 */
const FIRST_BATCH_BYTES = 64 * 1024;
const EMPTY = new Uint8Array(0);
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

const ignoreEnoent = (e: unknown) => {
  if ((e as NodeJS.ErrnoException | null)?.code !== 'ENOENT') throw e;
};

/** The temp file as `begin` made it: `durableWrites` when each write is durable as it returns (O_DSYNC). */
export interface TempFile {
  fh: OpenFile;
  durableWrites: boolean;
  /** Opens the same file again for plain writes. */
  reopen(): Promise<OpenFile>;
}

/**
 * A writer over a temp file. The file is made for durable writes, so a blob
 * that fits one batch (written once, at commit) needs no separate sync: each
 * file system call is a trip through the thread pool. A larger blob is
 * written through a plain handle of the same file instead, which is synced
 * once at commit, since a durable write per batch would cost far more.
 * `publish` links the file under its key and removes it; it is called as the
 * commit begins, with a promise of the bytes being durable, so it can prepare
 * the key's place meanwhile, and must link only once that promise has resolved.
 */
export function createTempWriter(
  file: TempFile,
  tmpPath: string,
  checkKey: (key: string) => void,
  publish: (key: string, durable: Promise<void>) => Promise<boolean>,
): BlobWriter {
  let fh = file.fh;
  let durableWrites = file.durableWrites;
  /** Whether any batch was handed to the background writes (set when queued, not when written). */
  let flushed = false;
  // Chunks are copied into 1 MiB batches written in the background, so hashing
  // the next chunk overlaps the disk write of earlier ones and the thread pool
  // sees a few large writes instead of many small ones. Up to HIGH_WATER bytes
  // may be pending; past that, write() waits, which pushes back on the body.
  let queue: Promise<void> = Promise.resolve();
  const batches: Promise<void>[] = [];
  const spare: Uint8Array[] = [];
  let batch: Uint8Array = EMPTY;
  let batchLength = 0;
  let inflight = 0;
  let failure: unknown;
  let state: 'open' | 'committing' | 'done' = 'open';
  let committing: Promise<boolean> | undefined;
  let aborting: Promise<void> | undefined;
  const ensureOpen = () => {
    if (state !== 'open') throw new Error('blob writer is closed');
  };
  /** Room for more bytes in the batch: a spare full-size one, or one twice the size holding what it had. */
  const grow = (wanted: number) => {
    if (batchLength === 0 && spare.length > 0) {
      batch = spare.pop()!;
      return;
    }
    const bigger = new Uint8Array(Math.min(BATCH_BYTES, Math.max(FIRST_BATCH_BYTES, batch.length * 2, batchLength + wanted)));
    bigger.set(batch.subarray(0, batchLength));
    batch = bigger;
  };
  const flush = () => {
    if (batchLength === 0) return;
    const buffer = batch;
    const full = buffer.subarray(0, batchLength);
    inflight += full.length;
    batch = EMPTY;
    batchLength = 0;
    flushed = true;
    queue = queue.then(async () => {
      try {
        if (durableWrites) {
          const synced = fh;
          fh = await file.reopen();
          durableWrites = false;
          await synced.close();
        }
        for (let off = 0; off < full.length; ) off += (await fh.write(full, off, full.length - off)).bytesWritten;
      } catch (err) {
        failure ??= err;
      } finally {
        inflight -= full.length;
        // Reused: a fresh 1 MiB per batch would make 100 MB of garbage per 100 MB upload.
        if (spare.length < 6 && buffer.length === BATCH_BYTES) spare.push(buffer);
        batches.shift(); // batches settle in order: this one is the oldest
      }
    });
    batches.push(queue);
  };
  const throwIfFailed = () => {
    if (failure !== undefined) throw failure;
  };

  return {
    async write(chunk) {
      ensureOpen();
      throwIfFailed();
      for (let off = 0; off < chunk.length; ) {
        if (batchLength === batch.length) grow(chunk.length - off);
        const n = Math.min(chunk.length - off, batch.length - batchLength);
        batch.set(chunk.subarray(off, off + n), batchLength);
        batchLength += n;
        off += n;
        if (batchLength === BATCH_BYTES) flush();
      }
      // Wait for the oldest batches only, so the disk stays busy meanwhile.
      while (inflight > HIGH_WATER_BYTES) {
        await batches[0];
        throwIfFailed();
      }
    },

    async commit(key) {
      checkKey(key); // before any state change: a bad key leaves the writer usable
      ensureOpen();
      state = 'committing';
      committing = (async () => {
        const durable = (async () => {
          if (durableWrites && !flushed && batchLength > 0) {
            // Nothing written yet: the whole blob is this batch, durable once written.
            flushed = true;
            for (let off = 0; off < batchLength; ) off += (await fh.write(batch, off, batchLength - off)).bytesWritten;
            batchLength = 0;
            return;
          }
          flush();
          await queue;
          throwIfFailed();
          await fh.sync();
        })();
        const closed = durable.then(() => fh.close());
        // Every step settles before the commit does, so a failed one leaves nothing running for abort to race.
        const [linked, ...rest] = await Promise.allSettled([publish(key, durable), durable, closed]);
        for (const r of [...rest, linked]) if (r.status === 'rejected') throw r.reason;
        state = 'done';
        return (linked as PromiseFulfilledResult<boolean>).value;
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
