// BlobStore on an S3-compatible bucket (AWS S3, MinIO, R2, Ceph, ...), over
// aws4fetch: Web fetch and WebCrypto only, so the same store runs on Node,
// Lambda, Bun and Deno. Objects live at `${prefix}${key}`; uploads larger
// than one part go through multipart uploads to `${prefix}.tmp/` first (see
// writer.ts). Unlike the fs store it cannot wipe temporaries at start, since
// other instances may be writing there: give the bucket lifecycle rules that
// abort incomplete multipart uploads and expire `${prefix}.tmp/` after a day,
// for what a crash leaves behind. The credentials need s3:GetObject,
// PutObject, DeleteObject, AbortMultipartUpload and ListBucket (without
// ListBucket S3 answers 403 instead of 404 for a missing key).

import { BLOB_KEY, checkBlobKey } from '../blob-key.ts';
import { checkByteRange } from '../byte-range.ts';
import type { BlobStore } from '../types.ts';
import { createS3Client } from './client.ts';
import { s3Operations } from './operations.ts';
import type { S3BlobStoreOptions } from './options.ts';
import { resolveS3Options } from './resolve-options.ts';
import { signedUrlQuery } from './signed-url.ts';
import { createS3Writer } from './writer.ts';

export { S3Error } from './client.ts';
export { parseBlobsUrl, type S3BlobStoreOptions, type S3Credentials, type S3Fetch, s3OptionsFromEnv } from './options.ts';

export type S3BlobStore = BlobStore &
  Required<Pick<BlobStore, 'list' | 'signedUrl' | 'close'>> & { readonly bucket: string; readonly prefix: string };

/** S3 presigned URLs live at most a week. */
const MAX_URL_SECONDS = 7 * 24 * 3600;

export async function createS3BlobStore(options: S3BlobStoreOptions): Promise<S3BlobStore> {
  const resolved = resolveS3Options(options);
  const { prefix, partSizeBytes, maxKeys } = resolved;
  const client = createS3Client(resolved);
  const ops = s3Operations(client);
  const objectKey = (key: string) => {
    checkBlobKey(key);
    return prefix + key;
  };

  // Commits of one key on this instance run one after another, so the HEAD before each write sees the one
  // before it even where the server ignores If-None-Match (s3rver does; so did S3 itself before 2024).
  const commits = new Map<string, Promise<unknown>>();
  function exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const run = (commits.get(key) ?? Promise.resolve()).then(task);
    const settled = run.then(
      () => {},
      () => {},
    );
    commits.set(key, settled);
    void settled.then(() => {
      if (commits.get(key) === settled) commits.delete(key);
    });
    return run;
  }

  return {
    bucket: resolved.bucket,
    prefix,
    location: `s3://${resolved.bucket}/${prefix}`,

    async begin() {
      return createS3Writer({ ops, partSizeBytes, objectKey, tempKey: () => `${prefix}.tmp/${crypto.randomUUID()}`, exclusive });
    },

    async get(key, range) {
      const full = objectKey(key);
      if (range) checkByteRange(range);
      return ops.get(full, range);
    },

    async has(key) {
      return ops.exists(objectKey(key));
    },

    async delete(key) {
      await ops.delete(objectKey(key));
    },

    async *list() {
      let token: string | null = null;
      do {
        const page = await ops.listPage(prefix, maxKeys, token);
        for (const object of page.objects) {
          const key = object.key.slice(prefix.length);
          // Anything else under the prefix (a stray upload by hand) is not a blob of ours.
          if (object.key.startsWith(prefix) && BLOB_KEY.test(key)) yield { key, modified_at: object.lastModified };
        }
        token = page.nextToken;
      } while (token !== null);
    },

    async signedUrl(key, { expiresInSeconds, filename, contentType }) {
      const full = objectKey(key);
      if (!Number.isSafeInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_URL_SECONDS) {
        throw new RangeError(`expiresInSeconds must be an integer in 1..${MAX_URL_SECONDS}, not ${expiresInSeconds}`);
      }
      return client.presignGet(full, expiresInSeconds, signedUrlQuery({ filename, contentType }));
    },

    async close() {
      // Nothing to release: connections belong to fetch, and writers end with their commit or abort.
    },
  };
}
