// Uploads whose body never completes: a request body stream that fails, and a
// client that disconnects mid-body over a real socket. The server must answer
// cleanly or abort, and leave no asset, blob or temporary file behind.
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_INLINE_BLOB_BYTES } from '../storage/sql/sqlite.ts';
import {
  blake3Of,
  concatBytes,
  expectEnvelope,
  fileParts,
  headByHash,
  MP,
  multipartBody,
  postRaw,
  randomBytes,
  upload,
  waitFor,
} from './helpers/assets.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';

describe.each(MODES)('failing request bodies (%s)', (mode) => {
  let h: Harness;
  afterEach(async () => {
    if (!h) return;
    try {
      expect(await h.blobFiles(), 'nothing stored by a failed upload').toEqual({ blobs: [], temp: [] });
    } finally {
      await h.close();
    }
  });

  it('a request body stream that fails midway stores nothing and the service keeps working', async () => {
    h = await startHarness(mode);
    const body = multipartBody('bnd', fileParts(randomBytes(300_000)));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 150_000) return c.error(new Error('client gave up'));
        c.enqueue(body.slice(sent, sent + 30_000));
        sent += 30_000;
      },
    });
    const outcome = await postRaw(h, stream, MP('bnd')).then(
      (res) => res,
      (err: unknown) => err,
    );
    if (outcome instanceof Response) {
      // In process the service sees the failed body and answers it.
      await expectEnvelope(outcome, 400, 'malformed_request');
    } else {
      // Over the network the client aborts; the server must clean up by itself.
      expect(mode).toBe('node-server');
      await waitFor('temp files removed', async () => (await h.blobFiles()).temp.length === 0);
    }
    // The service still takes uploads (removed again so the no-leftovers check applies).
    const ok = await upload(h, 'still works');
    expect(ok.res.status).toBe(201);
    expect((await h.fetch(`/api/v2/assets/${ok.body.id}`, { method: 'DELETE' })).status).toBe(204);
    await h.service.idle();
  });
});

describe('truncated uploads over the network (node-server)', () => {
  let h: Harness;
  afterEach(async () => h?.close());

  /**
   * Sends the head of a multipart upload with a Content-Length larger than
   * what is sent, waits until the server is staging the file, then destroys
   * the socket and waits for the server to clean up.
   */
  async function truncate(build: (boundary: string) => Uint8Array, idempotencyKey: string) {
    const url = new URL(h.base);
    const boundary = 'TruncatedBoundary42';
    const sent = build(boundary);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/api/v2/assets',
      headers: {
        'content-type': MP(boundary),
        'content-length': String(sent.length + 1_000_000),
        'idempotency-key': idempotencyKey,
      },
    });
    const closed = new Promise<void>((resolve) => req.on('close', () => resolve()));
    let response: number | undefined;
    req.on('response', (res) => {
      response = res.statusCode;
      res.resume();
    });
    req.on('error', () => {}); // the reset we cause ourselves
    req.write(sent);
    await waitFor('the server to stage the file', async () => (await h.blobFiles()).temp.length === 1);
    req.destroy();
    await closed;
    await waitFor('the server to remove the temporary file', async () => (await h.blobFiles()).temp.length === 0);
    await h.service.idle();
    expect(response, 'no response before the body was complete').toBeUndefined();
    expect(await h.blobFiles()).toEqual({ blobs: [], temp: [] });
  }

  it('a client that disconnects inside the file part leaves no asset, blob or temp file', async () => {
    h = await startHarness('node-server');
    const file = randomBytes(2 * 1024 * 1024);
    const key = crypto.randomUUID();
    await truncate((b) => multipartBody(b, fileParts(file), { close: false }).slice(0, 400_000), key);
    expect(await headByHash(h, await blake3Of(file))).toBe(404);
    // The key of the failed request is free again and the service still works.
    const { res, body } = await upload(h, file, {}, { 'idempotency-key': key });
    expect(res.status).toBe(201);
    expect(body.created_new).toBe(true);
  });

  it('a client that disconnects after the whole file part, before the closing boundary, leaves nothing', async () => {
    h = await startHarness('node-server');
    // Past SQLite's inline limit: the bytes go to a temp file, whose staging the test waits for.
    const file = randomBytes(DEFAULT_INLINE_BLOB_BYTES + 1024);
    const key = crypto.randomUUID();
    await truncate(
      (b) => concatBytes(multipartBody(b, fileParts(file), { close: false }), `--${b}\r\nContent-Disposition: form-data; name="tags"\r\n\r\nin`),
      key,
    );
    expect(await headByHash(h, await blake3Of(file))).toBe(404);
    expect((await upload(h, file, {}, { 'idempotency-key': key })).res.status).toBe(201);
  });
});
