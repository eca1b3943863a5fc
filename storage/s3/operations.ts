// The S3 operations the blob store uses, each one request (with its
// retries): what status means what, and which answers carry XML.
import type { ByteRange } from '../types.ts';
import { type S3Client, S3Error } from './client.ts';
import { rangeBody } from './range-body.ts';
import { completeBody, errorOf, type ListPage, listPageOf, uploadIdOf } from './xml.ts';

const discard = async (response: Response) => {
  // Cancelled rather than left to the collector, so the connection goes back to the pool now.
  await response.body?.cancel().catch(() => {});
};

/** The XML of a 200 that may still be an `<Error>` (CopyObject, CompleteMultipartUpload answer so). */
async function xmlOf(operation: string, response: Response): Promise<string> {
  const text = await response.text();
  const err = errorOf(text);
  if (err) throw new S3Error(operation, response.status, err.code, err.message);
  return text;
}

export function s3Operations(client: S3Client) {
  return {
    async exists(key: string): Promise<boolean> {
      return client.send('HeadObject', { method: 'HEAD', key }, [200, 404], async (r) => {
        await discard(r);
        return r.status === 200;
      });
    },

    /** The object's bytes, null when there is none. A range starting past the end is empty (S3 answers 416). */
    async get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
      const headers = range ? { range: `bytes=${range.start}-${range.end}` } : undefined;
      return client.send('GetObject', { method: 'GET', key, headers }, [200, 206, 404, 416], async (r) => {
        if (r.status === 404 || r.status === 416) {
          await discard(r);
          return r.status === 404 ? null : new ReadableStream<Uint8Array>({ start: (c) => c.close() });
        }
        return range ? rangeBody(r, range) : (r.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() }));
      });
    },

    /** PutObject that creates `key` only if it does not exist (If-None-Match: *). True when it did. */
    async putIfAbsent(key: string, body: Uint8Array): Promise<boolean> {
      const headers = { 'content-type': 'application/octet-stream', 'if-none-match': '*' };
      // 412: the key exists. (A 409, a conditional write racing another, is retried by the client as S3 asks.)
      return client.send('PutObject', { method: 'PUT', key, headers, body }, [200, 412], async (r) => (await discard(r), r.status === 200));
    },

    /** Server-side CopyObject of `from` to `to`, only if `to` does not exist. True when it did. */
    async copyIfAbsent(from: string, to: string): Promise<boolean> {
      const headers = { 'x-amz-copy-source': client.copySource(from), 'if-none-match': '*' };
      return client.send('CopyObject', { method: 'PUT', key: to, headers }, [200, 412], async (r) => {
        if (r.status === 412) return (await discard(r), false);
        await xmlOf('CopyObject', r);
        return true;
      });
    },

    async delete(key: string): Promise<void> {
      // S3 answers 204 for a missing key too; 404 comes from stricter S3-compatible servers.
      await client.send('DeleteObject', { method: 'DELETE', key }, [200, 204, 404], discard);
    },

    async createMultipartUpload(key: string): Promise<string> {
      const headers = { 'content-type': 'application/octet-stream' };
      return client.send('CreateMultipartUpload', { method: 'POST', key, query: { uploads: '' }, headers }, [200], async (r) =>
        uploadIdOf(await r.text()),
      );
    },

    /** Uploads part `number` (1-based) and returns the ETag CompleteMultipartUpload must name it by. */
    async uploadPart(key: string, uploadId: string, number: number, body: Uint8Array): Promise<string> {
      const query = { partNumber: String(number), uploadId };
      return client.send('UploadPart', { method: 'PUT', key, query, body }, [200], async (r) => {
        await discard(r);
        const etag = r.headers.get('etag');
        if (!etag) throw new S3Error('UploadPart', r.status, '', 'no ETag in the answer');
        return etag;
      });
    },

    async completeMultipartUpload(key: string, uploadId: string, parts: { number: number; etag: string }[]): Promise<void> {
      const request = {
        method: 'POST' as const,
        key,
        query: { uploadId },
        headers: { 'content-type': 'application/xml' },
        body: completeBody(parts),
      };
      await client.send('CompleteMultipartUpload', request, [200], (r) => xmlOf('CompleteMultipartUpload', r));
    },

    /** Drops the upload and its parts; one already gone (404 NoSuchUpload) is as good. */
    async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
      await client.send('AbortMultipartUpload', { method: 'DELETE', key, query: { uploadId } }, [200, 204, 404], discard);
    },

    /** One page of the objects directly under `prefix` (the delimiter keeps deeper "folders" out). */
    async listPage(prefix: string, maxKeys: number, token: string | null): Promise<ListPage> {
      const query: Record<string, string> = { 'list-type': '2', prefix, delimiter: '/', 'max-keys': String(maxKeys) };
      if (token !== null) query['continuation-token'] = token;
      return client.send('ListObjectsV2', { method: 'GET', query }, [200], async (r) => listPageOf(await r.text()));
    },
  };
}

export type S3Operations = ReturnType<typeof s3Operations>;
