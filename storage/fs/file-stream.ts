// A Web ReadableStream over a byte range of an open file, read on demand.
import type { FileHandle } from 'node:fs/promises';

const READ_CHUNK = 64 * 1024;

/**
 * Reads [start, end) on demand: each pull is one positioned read, so a slow
 * consumer holds at most one chunk in memory. Consumers must read to the end
 * or cancel, which closes the file.
 */
export function fileStream(fh: FileHandle, start: number, end: number): ReadableStream<Uint8Array> {
  let position = start;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await fh.close();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const want = Math.min(READ_CHUNK, end - position);
        // Not pooled: consumers may keep or transfer the chunk's buffer.
        const buf = want > 0 ? Buffer.allocUnsafeSlow(want) : null;
        const bytesRead = buf ? (await fh.read(buf, 0, want, position)).bytesRead : 0;
        if (bytesRead > 0) {
          position += bytesRead;
          controller.enqueue(new Uint8Array(buf!.buffer, buf!.byteOffset, bytesRead));
        }
        if (bytesRead === 0 || position >= end) {
          await close();
          controller.close();
        }
      } catch (e) {
        await close().catch(() => {});
        controller.error(e);
      }
    },
    cancel: close,
  });
}
