// In-process BlobStore keeping each object as the list of chunks it was
// written in: for tests, examples and small deployments without a disk.
import { checkByteRange } from '../byte-range.ts';
import { copyBytes } from '../copy-bytes.ts';
import type { BlobStore, BlobWriter } from '../types.ts';

export function createMemoryBlobStore(): BlobStore {
  const objects = new Map<string, Uint8Array[]>();
  const written = new Map<string, number>();

  return {
    async begin(): Promise<BlobWriter> {
      let chunks: Uint8Array[] | null = [];
      const open = () => {
        if (!chunks) throw new Error('blob writer is closed');
        return chunks;
      };
      return {
        async write(chunk) {
          open().push(copyBytes(chunk));
        },
        async commit(key) {
          const data = open();
          chunks = null;
          if (objects.has(key)) return false;
          objects.set(key, data);
          written.set(key, Date.now());
          return true;
        },
        async abort() {
          chunks = null;
        },
      };
    },

    async get(key, range) {
      if (range) checkByteRange(range);
      const chunks = objects.get(key);
      if (!chunks) return null;
      // Inclusive end, clamped to the object's size (like fs.createReadStream).
      const start = range?.start ?? 0;
      const end = range ? range.end + 1 : Infinity;
      const parts: Uint8Array[] = [];
      let offset = 0;
      for (const c of chunks) {
        const from = Math.max(start - offset, 0);
        const to = Math.min(end - offset, c.length);
        if (from < to) parts.push(c.slice(from, to));
        offset += c.length;
        if (offset >= end) break;
      }
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = parts.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      });
    },

    async has(key) {
      return objects.has(key);
    },

    async delete(key) {
      objects.delete(key);
      written.delete(key);
    },

    async *list() {
      for (const [key, at] of [...written]) yield { key, modified_at: at };
    },
  };
}
