// The request body as a Web ReadableStream, read from the socket only as fast
// as the consumer pulls (pause/resume), so a 100 MB upload is never held whole.
import type { IncomingMessage } from 'node:http';

/** Read-ahead kept in the Web stream's queue before the socket is paused. */
const HIGH_WATER_MARK = 1024 * 1024;

export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
  readonly status = 413;
  constructor(readonly limit: number) {
    super(`The request body is larger than ${limit} bytes.`);
  }
}

export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
  readonly code = 'ECONNRESET';
}

// Requests whose body we stopped reading: the rest is still on the wire, so
// the connection cannot carry another request.
const abandoned = new WeakSet<IncomingMessage>();

// How a body stream that nobody finished reading lets go of its request, so
// the writer can drain what is left (drainRequestBody).
const releases = new WeakMap<IncomingMessage, () => void>();

/** True when the response must close the connection (the body was not read to its end). */
export function mustCloseConnection(req: IncomingMessage): boolean {
  return abandoned.has(req) || !req.complete;
}

/** Whether HTTP/1.1 framing says there is a body at all. */
export function hasBody(req: IncomingMessage): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/** Listens to the body as it arrives: each chunk, its end, or the client leaving (error, abort, close). Returns the detach. */
function listenToBody(req: IncomingMessage, onData: (chunk: Buffer) => void, onEnd: () => void, onGone: (cause?: unknown) => void): () => void {
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('error', onGone);
  req.once('aborted', onGone);
  req.once('close', onGone);
  return () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onGone);
    req.off('aborted', onGone);
    req.off('close', onGone);
  };
}

export function requestBodyStream(req: IncomingMessage, maxBodyBytes = Infinity): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let settled = false;
  let received = 0;

  let detach = () => {};
  const settle = (error?: Error) => {
    if (settled) return;
    settled = true;
    detach();
    if (!error) return controller.close();
    abandoned.add(req);
    req.pause();
    // Error, not close: a consumer must see a failed upload, never a short one.
    controller.error(error);
  };
  function onData(chunk: Buffer) {
    if (settled) return;
    received += chunk.byteLength;
    if (received > maxBodyBytes) return settle(new BodyTooLargeError(maxBodyBytes));
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  }
  function onEnd() {
    settle();
  }
  function onGone(cause?: unknown) {
    settle(new ClientGoneError('The client disconnected before the request body was complete.', { cause }));
  }

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        releases.set(req, () => settle(new ClientGoneError('The response was sent before the request body was read.')));
        // Paused before 'data' is attached, so nothing flows until the first pull.
        req.pause();
        detach = listenToBody(req, onData, onEnd, onGone);
      },
      pull() {
        req.resume();
      },
      cancel() {
        // Not req.destroy(): the same socket still has to carry the response.
        // The writer sees the mark and closes the connection after it.
        settled = true;
        detach();
        req.pause();
        abandoned.add(req);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_MARK }),
  );
}

/** Bodies up to this size whose length the headers give are read whole before the service is asked (readWholeBody). */
export const WHOLE_BODY_MAX_BYTES = 256 * 1024;

/**
 * The length of a body small enough to read whole (one whose length the
 * headers give, up to WHOLE_BODY_MAX_BYTES, not encoded), else undefined:
 * then the body streams.
 */
export function wholeBodyLength(req: IncomingMessage): number | undefined {
  const { 'content-length': length, 'transfer-encoding': chunked, 'content-encoding': encoded } = req.headers;
  if (length === undefined || chunked !== undefined || encoded !== undefined || !/^[1-9]\d{0,6}$/.test(length)) return undefined;
  const n = Number(length);
  return n <= WHOLE_BODY_MAX_BYTES ? n : undefined;
}

/**
 * A small body read whole off the socket (see wholeBodyLength): the core
 * takes the bytes as they are (FetchOptions.requestBody), with no Web stream
 * between. Rejects with ClientGoneError when the client leaves first.
 */
export function readWholeBody(req: IncomingMessage): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    function onData(chunk: Buffer) {
      chunks.push(chunk);
      size += chunk.byteLength;
    }
    function onEnd() {
      detach();
      const whole = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      resolve(new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength));
    }
    function onGone(cause?: unknown) {
      detach();
      abandoned.add(req);
      reject(new ClientGoneError('The client disconnected before the request body was complete.', { cause }));
    }
    const detach = listenToBody(req, onData, onEnd, onGone);
  });
}

/**
 * Unread body bytes read and thrown away after an early answer (a 401 or a
 * 422 before the upload is read), at most: a client cut off mid-upload may
 * never see the answer (a socket closed with bytes unread is reset, and its
 * pending writes fail with EPIPE), so a body of this size or less is taken
 * in full before the connection closes. Larger ones are cut off as before:
 * reading 100 MB to say 401 costs more than a client's retry.
 */
export const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;
/** How long a drain may take before the connection is closed anyway (a client that trickles its body). */
const DRAIN_TIMEOUT_MS = 30_000;

/** True when the rest of the request body is still to come off the socket (the answer went out before it was read). */
export function bodyStillArriving(req: IncomingMessage): boolean {
  return !req.complete && !req.destroyed;
}

/**
 * Reads and discards the rest of the body (Apache's "lingering close"): the
 * response has been written, the caller ends it (and Node closes the
 * connection, marked `Connection: close`) when this resolves, on the body's
 * end, past DRAIN_LIMIT_BYTES, when the client leaves or after
 * DRAIN_TIMEOUT_MS. Never rejects.
 */
export function drainRequestBody(req: IncomingMessage): Promise<void> {
  releases.get(req)?.();
  releases.delete(req);
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (!bodyStillArriving(req) || declared > DRAIN_LIMIT_BYTES) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', done);
      req.off('close', done);
      req.off('error', done);
      req.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.byteLength;
      if (read > DRAIN_LIMIT_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_TIMEOUT_MS);
    req.on('data', onData);
    req.once('end', done);
    req.once('close', done);
    req.once('error', done);
    req.resume();
  });
}
