// A blob store that cannot drop a failed upload's bytes (an S3 server without
// AbortMultipartUpload answers 405): the client still gets the upload's own
// error, never a 500, and the failure is logged.
import { describe, expect, it } from 'vitest';
import { createService, type Logger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import type { BlobStore } from '../storage/types.ts';
import { blake3Of, randomBytes } from './helpers/assets.ts';
import { uploadForm } from './helpers/harness.ts';

/** The memory store, whose writers refuse to abort. */
function stubbornAborts(blobs: BlobStore): BlobStore {
  return {
    ...blobs,
    async begin() {
      const writer = await blobs.begin();
      return {
        write: (chunk) => writer.write(chunk),
        commit: (key) => writer.commit(key),
        abort: async () => {
          throw new Error('405 MethodNotAllowed: AbortMultipartUpload');
        },
      };
    },
  };
}

describe('a failed upload whose bytes cannot be discarded', () => {
  it('answers the upload error (409 hash_mismatch, 413) and logs the failed discard', async () => {
    const warnings: string[] = [];
    const logger: Logger = { info: () => {}, warn: (message) => warnings.push(message), error: () => {} };
    const storage = createMemoryStorage();
    const service = await createService({
      storage: { ...storage, blobs: stubbornAborts(storage.blobs) },
      logger,
      sweepIntervalMs: 0,
      maxUploadBytes: 64 * 1024,
    });
    try {
      const bytes = randomBytes(1000);
      const other = await blake3Of(randomBytes(10));
      const post = (form: FormData) => service.fetch(new Request('http://graphrun.test/api/v2/assets', { method: 'POST', body: form }));

      const mismatch = await post(uploadForm(bytes, { content_type: 'application/octet-stream', file_path: 'a.bin', expected_hash: other }));
      expect(mismatch.status).toBe(409);
      expect(((await mismatch.json()) as { error: { code: string } }).error.code).toBe('hash_mismatch');

      const tooLarge = await post(uploadForm(randomBytes(100 * 1024), { content_type: 'application/octet-stream', file_path: 'b.bin' }));
      expect(tooLarge.status).toBe(413);

      expect(warnings.filter((w) => /discard/.test(w)).length).toBeGreaterThanOrEqual(2);
      // The store still works for the next upload.
      const ok = await post(uploadForm(bytes, { content_type: 'application/octet-stream', file_path: 'c.bin' }));
      expect(ok.status).toBe(201);
    } finally {
      await service.close();
    }
  });
});
