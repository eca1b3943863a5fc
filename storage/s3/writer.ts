// The BlobWriter of the S3 store. Bytes are buffered up to one part; a body
// that fits one part is a single conditional PUT under its key at commit
// (no temporary at all). A larger one becomes a multipart upload to a
// temporary key: each full part is sent while the next one fills, and a
// write waits when a second part is full before the first has landed, so a
// writer holds at most two parts in memory. Commit completes the upload,
// then copies the temporary to the key unless the key exists, and deletes
// the temporary.
import type { BlobWriter } from '../types.ts';
import type { S3Operations } from './operations.ts';

/** S3 numbers parts 1..10000. */
const MAX_PARTS = 10_000;
/** CopyObject copies at most 5 GiB; larger objects would need UploadPartCopy. */
const MAX_COPY_BYTES = 5 * 1024 ** 3;
/** Small bodies grow their buffer from here, so thousands of small uploads do not each hold a whole part. */
const FIRST_BUFFER_BYTES = 64 * 1024;

export interface WriterContext {
  ops: S3Operations;
  partSizeBytes: number;
  /** The full object key of a blob key (throws TypeError on a key the store refuses). */
  objectKey(key: string): string;
  /** A fresh key under the temporary prefix. */
  tempKey(): string;
  /** Runs `task` after every earlier one of the same key has settled. */
  exclusive<T>(key: string, task: () => Promise<T>): Promise<T>;
}

export function createS3Writer(ctx: WriterContext): BlobWriter {
  const { ops, partSizeBytes } = ctx;
  let buffer: Uint8Array = new Uint8Array(Math.min(FIRST_BUFFER_BYTES, partSizeBytes));
  let length = 0;
  let size = 0;
  /** A part's buffer back from its upload, to fill again instead of allocating another. */
  let spare: Uint8Array | null = null;
  /** The multipart upload, once a body outgrows one part; null again once completed or aborted. */
  let upload: { key: string; id: string } | null = null;
  const parts: { number: number; etag: string }[] = [];
  let partCount = 0;
  /** The latest sendPart: abort waits for it, since it may be creating the upload. */
  let sending: Promise<void> = Promise.resolve();
  /** The part being sent: it settles without throwing, a failure lands in `failure`. */
  let inflight: Promise<void> = Promise.resolve();
  let failure: unknown;
  /** The completed upload's object, until it is deleted. */
  let temporary: string | null = null;
  let state: 'open' | 'committing' | 'committed' | 'aborted' = 'open';
  let committing: Promise<boolean> | undefined;
  let aborting: Promise<void> | undefined;

  const ensureOpen = () => {
    if (state !== 'open') throw new Error('blob writer is closed');
  };
  const throwIfFailed = () => {
    if (failure !== undefined) throw failure;
  };
  const throwIfAborted = () => {
    if (state === 'aborted') throw new Error('blob writer is closed');
  };

  /** Sends the full buffer as the next part, once the previous part has landed. */
  async function sendPart(): Promise<void> {
    await inflight;
    throwIfFailed();
    throwIfAborted();
    if (partCount === MAX_PARTS) throw new RangeError(`a blob of over ${MAX_PARTS} parts of ${partSizeBytes} bytes is too large for S3`);
    if (!upload) {
      const key = ctx.tempKey();
      upload = { key, id: await ops.createMultipartUpload(key) };
      throwIfAborted(); // abort, waiting for this call, drops the upload just made
    }
    const { key, id } = upload;
    const body = buffer.subarray(0, length);
    const number = ++partCount;
    const sent = buffer;
    buffer = spare ?? new Uint8Array(partSizeBytes);
    spare = null;
    length = 0;
    inflight = ops.uploadPart(key, id, number, body).then(
      (etag) => {
        parts.push({ number, etag });
        spare = sent;
      },
      (err: unknown) => {
        failure ??= err;
      },
    );
  }

  /** Room for `needed` bytes in the buffer, doubling it up to one part. */
  function reserve(needed: number): void {
    if (needed <= buffer.length) return;
    const grown = new Uint8Array(Math.min(partSizeBytes, Math.max(needed, buffer.length * 2)));
    grown.set(buffer.subarray(0, length));
    buffer = grown;
  }

  async function publish(key: string): Promise<boolean> {
    const finalKey = ctx.objectKey(key);
    if (!upload) {
      // One part or less: a single PUT, conditional where the server supports it, checked first where not.
      if (await ops.exists(finalKey)) return false;
      return ops.putIfAbsent(finalKey, buffer.subarray(0, length));
    }
    await (sending = sendPart()); // the last part: never empty, since a part is sent only when more bytes follow it
    await inflight;
    throwIfFailed();
    await ops.completeMultipartUpload(upload.key, upload.id, parts);
    temporary = upload.key;
    upload = null;
    let created: boolean;
    try {
      // Two commits of the same key on different instances may both find it absent and both copy: the bytes
      // are the same (the key is their hash), so the object is right either way; both calls then say they created it.
      created = (await ops.exists(finalKey)) ? false : await ops.copyIfAbsent(temporary, finalKey);
    } catch (err) {
      await dropTemporary().catch(() => {}); // abort tries again if this fails too
      throw err;
    }
    await dropTemporary();
    return created;
  }

  async function dropTemporary(): Promise<void> {
    if (temporary === null) return;
    await ops.delete(temporary);
    temporary = null;
  }

  const release = () => {
    buffer = new Uint8Array(0);
    spare = null;
  };

  return {
    async write(chunk) {
      ensureOpen();
      throwIfFailed();
      // Refused as it happens rather than at commit, after gigabytes were sent for nothing.
      if (size + chunk.length > MAX_COPY_BYTES) throw new RangeError(`S3 CopyObject copies at most ${MAX_COPY_BYTES} bytes; this blob is larger`);
      for (let off = 0; off < chunk.length; ) {
        // A full buffer is sent only when more bytes come, so a body of exactly one part stays a single PUT.
        if (length === partSizeBytes) await (sending = sendPart());
        const n = Math.min(chunk.length - off, partSizeBytes - length);
        reserve(length + n);
        buffer.set(chunk.subarray(off, off + n), length);
        length += n;
        off += n;
      }
      size += chunk.length;
    },

    async commit(key) {
      ctx.objectKey(key); // a bad key throws before any state changes, leaving the writer usable
      ensureOpen();
      state = 'committing';
      committing = ctx
        .exclusive(key, () => publish(key))
        .then((created) => {
          state = 'committed';
          release();
          return created;
        });
      return committing;
    },

    abort() {
      // A failed abort may be retried (S3 may have been unreachable); a finished one is not repeated.
      return (aborting ??= (async () => {
        await committing?.catch(() => {});
        if (state === 'committed') return;
        state = 'aborted';
        // A part still being sent could otherwise land after the abort, and an upload being created be missed.
        await sending.catch(() => {});
        await inflight;
        release();
        if (upload) {
          await ops.abortMultipartUpload(upload.key, upload.id);
          upload = null;
        }
        await dropTemporary();
      })().catch((err: unknown) => {
        aborting = undefined;
        throw err;
      }));
    },
  };
}
