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

export function requestBodyStream(req: IncomingMessage, maxBodyBytes = Infinity): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let settled = false;
  let received = 0;

  const detach = () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onGone);
    req.off('aborted', onGone);
    req.off('close', onGone);
  };
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
        // Paused before 'data' is attached, so nothing flows until the first pull.
        req.pause();
        req.on('data', onData);
        req.once('end', onEnd);
        req.once('error', onGone);
        req.once('aborted', onGone);
        req.once('close', onGone);
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
