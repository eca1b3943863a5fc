// Node IncomingMessage -> Web Request: streaming body, abort signal tied to
// the client's connection, URL from Host (or X-Forwarded-* behind a proxy).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hasBody, requestBodyStream } from './request-body.ts';
import { BadRequestError, requestHeaders, requestUrl } from './request-head.ts';

export interface NodeRequestOptions {
  /** Largest body read from the socket; past it the body stream errors. Default: no limit (the service enforces its own). */
  maxBodyBytes?: number;
  /** Take the origin from X-Forwarded-Host / X-Forwarded-Proto (only behind a proxy that sets them). */
  trustProxy?: boolean;
}

export function incomingMessageToRequest(
  req: IncomingMessage,
  res: ServerResponse,
  opts: NodeRequestOptions = {},
): Request {
  const url = requestUrl(req, opts.trustProxy);
  const headers = requestHeaders(req);
  const abort = new AbortController();
  // 'close' also follows a normal finish; only an unfinished response means the client left.
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const body = hasBody(req) ? requestBodyStream(req, opts.maxBodyBytes) : null;
  try {
    return new Request(url, { method: req.method, headers, body, signal: abort.signal, duplex: 'half' });
  } catch (err) {
    // e.g. TRACE, which fetch forbids; the body is left unread and the connection closed.
    void body?.cancel();
    throw new BadRequestError(err instanceof Error ? err.message : 'The request is not valid.');
  }
}
