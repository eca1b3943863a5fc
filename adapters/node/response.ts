// Web Response -> Node ServerResponse: status, headers (every Set-Cookie),
// and the body streamed chunk by chunk at the pace the client reads it, or
// written at once when the core built it from bytes it already had.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SseAttachment, SseSource } from '../../core/jobs/sse.ts';
import { knownBody, knownEventSource, knownHeaders } from './known-body.ts';
import { bodyStillArriving, drainRequestBody, mustCloseConnection } from './request-body.ts';

// Connection management belongs to Node's HTTP layer, not to the service.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'set-cookie']);

const noop = () => {};

/** Resolves when the socket can take more, or when it is gone (so a writer never hangs). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** True when the promise settles before the event loop turns once. */
function settlesNow(promise: Promise<unknown>): Promise<boolean> {
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setImmediate(resolve, false)),
  ]);
}

/**
 * Ends the response, `last` its final bytes. When the request body is still
 * arriving (the service answered before reading it), the answer goes out
 * first and the end waits until the rest of the body is read off the wire:
 * ending now would have Node close a socket with bytes unread, which resets
 * the connection and can cost the client the answer (EPIPE, "fetch failed").
 */
async function end(res: ServerResponse, req: IncomingMessage | undefined, last?: string): Promise<void> {
  if (req === undefined || res.destroyed || !bodyStillArriving(req)) return void res.end(last);
  if (last !== undefined) res.write(last);
  else res.flushHeaders();
  await drainRequestBody(req);
  res.end();
}

function setHead(res: ServerResponse, response: Response, req?: IncomingMessage): void {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  for (const [name, value] of response.headers) {
    if (!HOP_BY_HOP.has(name)) res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  // Unread body bytes are still on the wire: reusing the socket would parse them as a request.
  if (req && mustCloseConnection(req)) res.setHeader('connection', 'close');
}

async function pipeBody(res: ServerResponse, body: ReadableStream<Uint8Array>, req?: IncomingMessage): Promise<void> {
  const reader = body.getReader();
  const onClose = () => {
    if (!res.writableFinished) reader.cancel().catch(noop);
  };
  res.once('close', onClose);
  try {
    const first = reader.read();
    // A live stream (SSE) may not produce a byte for a while: let the client see the head now.
    if (!(await settlesNow(first))) res.flushHeaders();
    for (let chunk = await first; !chunk.done; chunk = await reader.read()) {
      if (res.destroyed) break;
      if (!res.write(chunk.value)) await drained(res);
    }
    if (!res.destroyed) await end(res, req);
  } catch (err) {
    // Before the head is out the caller can still answer 500; after, only a
    // broken connection tells the client the body is truncated.
    if (!res.headersSent) throw err;
    res.destroy(err instanceof Error ? err : new Error(String(err)));
  } finally {
    res.off('close', onClose);
    if (res.destroyed) reader.cancel().catch(noop);
  }
}

/** The fields of a Headers object: names lowercased, duplicates joined, every Set-Cookie on its own. */
function headerFields(headers: Headers): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  let cookies: string[] | undefined;
  for (const [name, value] of headers) {
    if (name === 'set-cookie') (cookies ??= []).push(value);
    else if (!HOP_BY_HOP.has(name) && name !== 'content-length') fields[name] = value;
  }
  if (cookies !== undefined) fields['set-cookie'] = cookies;
  return fields;
}

/**
 * The same from the record a known-body response was given, sparing a
 * Headers built only to be read back; undefined (take the Headers path) for
 * anything a Headers object would have to merge or check: two names that
 * differ only in case, a Set-Cookie, a value with a line break.
 */
function givenFields(record: Record<string, string> | undefined): Record<string, string> | undefined {
  if (record === undefined) return undefined;
  const fields: Record<string, string> = Object.create(null);
  for (const key of Object.keys(record)) {
    const name = key.toLowerCase();
    const value = record[key];
    if (name in fields || name === 'set-cookie' || typeof value !== 'string' || /[\r\n\0]/.test(value)) return undefined;
    // Headers would trim the value's surrounding whitespace.
    if (!HOP_BY_HOP.has(name) && name !== 'content-length') fields[name] = value.trim();
  }
  return fields;
}

/** The head of an answer built in known-body.ts: its fields as given (else read off `headers`), closing the connection where it must. */
function headFields(response: Response, req?: IncomingMessage): Record<string, string | string[]> {
  const fields = givenFields(knownHeaders(response)) ?? headerFields(response.headers);
  if (req && mustCloseConnection(req)) fields.connection = 'close';
  return fields;
}

/**
 * A body the core already holds whole (known-body.ts) goes out with its
 * length in one writeHead and one end, as a bare node:http handler would
 * send it; the Web stream is never touched (HEAD gets the length alone).
 */
function writeKnown(res: ServerResponse, response: Response, text: string, req?: IncomingMessage): Promise<void> {
  // A plain object: writeHead stores it as is, where an array goes through setHeader one by one.
  // No prototype, so a header named like an Object.prototype member is just a header.
  const fields = headFields(response, req);
  fields['content-length'] = String(Buffer.byteLength(text));
  res.writeHead(response.status, response.statusText || undefined, fields);
  return end(res, req, req?.method === 'HEAD' ? undefined : text);
}

/**
 * An SSE answer (known-body.ts) goes out frame by frame from its source,
 * with no Web stream or reader between: the head waits one turn of the event
 * loop for the first frame, to leave in one write with it, as pipeBody does.
 */
function writeEventStream(res: ServerResponse, response: Response, source: SseSource, req?: IncomingMessage): Promise<void> {
  res.writeHead(response.status, response.statusText || undefined, headFields(response, req));
  return new Promise<void>((resolve) => {
    let wrote = false;
    let attachment: SseAttachment | undefined;
    const onDrain = () => attachment?.drained();
    res.on('drain', onDrain);
    res.once('close', () => {
      res.off('drain', onDrain);
      if (!res.writableFinished) attachment?.cancel(new Error('The client went away.'));
      resolve();
    });
    // Frames sent before the next turn (those already waiting come at once) leave in one write with the head.
    res.cork();
    setImmediate(() => {
      if (res.writableEnded) return;
      // A live stream may not produce a byte for a while: let the client see the head now.
      if (!wrote) res.flushHeaders();
      res.uncork();
    });
    attachment = source.attach({
      write(chunk) {
        wrote = true;
        if (!res.destroyed) res.write(chunk);
      },
      buffered: () => res.writableLength,
      // May come from within attach, for a stream that ended before it was attached.
      end() {
        res.off('drain', onDrain);
        if (res.destroyed) return resolve();
        end(res, req).then(resolve, () => (res.destroy(), resolve()));
      },
    });
  });
}

export async function writeResponse(res: ServerResponse, response: Response, req?: IncomingMessage): Promise<void> {
  const known = knownBody(response);
  if (known !== undefined && response.status !== 204 && response.status !== 304) return writeKnown(res, response, known, req);
  // HEAD takes the general way below, which cancels the body unread.
  const source = req?.method === 'HEAD' ? undefined : knownEventSource(response);
  if (source !== undefined) return writeEventStream(res, response, source, req);
  setHead(res, response, req);
  if (!response.body || req?.method === 'HEAD' || response.status === 204 || response.status === 304) {
    response.body?.cancel().catch(noop);
    // Said now, as Node says it when the end comes at once: the end may wait for the request body.
    if (!response.body && response.status !== 204 && response.status !== 304 && req?.method !== 'HEAD' && !res.hasHeader('content-length')) {
      res.setHeader('content-length', '0');
    }
    return end(res, req);
  }
  await pipeBody(res, response.body, req);
}
