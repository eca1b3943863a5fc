// Node IncomingMessage -> Web Request: streaming body, abort signal tied to
// the client's connection, URL from Host (or X-Forwarded-* behind a proxy).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readsRequestsOnly } from '../../core/own-services.ts';
import type { Service } from '../../core/types.ts';
import { clientSignal } from './client-signal.ts';
import { lightRequest, takesBodilessRequest } from './light-request.ts';
import { hasBody, requestBodyStream, wholeBodyLength } from './request-body.ts';
import { appendRequestHeaders, BadRequestError, requestHeaders, requestHref } from './request-head.ts';

export interface NodeRequestOptions {
  /** Largest body read from the socket; past it the body stream errors. Default: no limit (the service enforces its own). */
  maxBodyBytes?: number;
  /** Take the origin from X-Forwarded-Host / X-Forwarded-Proto (only behind a proxy that sets them). */
  trustProxy?: boolean;
}

/**
 * A real Request (any consumer or native API takes it) whose `signal` is made
 * only when read. Handing `signal` to the Request constructor costs more than
 * the rest of the conversion (undici ties its own controller to it with a
 * listener, a WeakRef and a finalizer), and most handlers never look at it.
 * The one here aborts when the client goes away; a copy made with
 * `new Request(request)` or `clone()` keeps undici's own, never-aborted signal.
 */
class NodeRequest extends Request {
  #res: ServerResponse;
  #signal: AbortSignal | undefined;

  constructor(url: string, init: RequestInit, res: ServerResponse) {
    super(url, init);
    this.#res = res;
  }

  // @ts-expect-error -- an accessor where lib.dom declares a property; at runtime Request.prototype.signal is a getter too
  override get signal(): AbortSignal {
    return (this.#signal ??= clientSignal(this.#res));
  }
}

/** What a caller already has of the request in another form than the IncomingMessage. */
export interface RequestParts {
  /** The target to use instead of req.url, e.g. with the mount prefix taken off. */
  target?: string;
  /**
   * The body, already read from the socket by someone else (a framework's
   * body parser): sent instead of the stream, which has ended. Its headers
   * describe these bytes (Content-Length; no Content-Encoding, the parser
   * inflated it).
   */
  body?: Uint8Array;
}

/**
 * The Request for `service`: for one of graphrun's own services
 * (readsRequestsOnly) a request without a body, or whose body the caller read
 * whole (`whole`, see readWholeBody), gets the light Request of
 * light-request.ts; everything else the plain conversion, which is also what
 * incomingMessageToRequest gives any caller.
 */
export function serviceRequest(
  service: Service,
  req: IncomingMessage,
  res: ServerResponse,
  opts: NodeRequestOptions,
  parts: RequestParts,
  whole?: Uint8Array,
): Request {
  if (whole !== undefined) return light(requestHref(req, opts.trustProxy, parts.target), req, res, whole);
  // Unless a framework's parser already took a body off the wire.
  if (parts.body === undefined && takesBodilessRequest(req.method) && !hasBody(req) && readsRequestsOnly(service)) {
    return light(requestHref(req, opts.trustProxy, parts.target), req, res, null);
  }
  return incomingMessageToRequest(req, res, opts, parts);
}

/** Whether serviceRequest takes this request's body read whole (its caller reads it first, with readWholeBody). */
export function takesWholeBody(service: Service, req: IncomingMessage, parts: RequestParts): boolean {
  return parts.body === undefined && WHOLE_BODY_METHODS.has(req.method ?? '') && wholeBodyLength(req) !== undefined && readsRequestsOnly(service);
}

/** Methods whose small bodies are read whole: fetch lets each carry one. */
const WHOLE_BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function incomingMessageToRequest(
  req: IncomingMessage,
  res: ServerResponse,
  opts: NodeRequestOptions = {},
  parts: RequestParts = {},
): Request {
  const url = requestHref(req, opts.trustProxy, parts.target);
  const body: ReadableStream<Uint8Array> | Uint8Array | null =
    parts.body !== undefined ? parts.body : hasBody(req) ? requestBodyStream(req, opts.maxBodyBytes) : null;
  let request: Request;
  try {
    // The constructor parses the URL: a target that is not one is a 400 below.
    request = new NodeRequest(url, { method: req.method, body, duplex: 'half' } as RequestInit, res);
  } catch (err) {
    // e.g. TRACE, which fetch forbids; the body is left unread and the connection closed.
    if (body instanceof ReadableStream) void body.cancel();
    throw new BadRequestError(err instanceof Error ? err.message : 'The request is not valid.');
  }
  // Into the Request's own headers, not through init (that copies a Headers built for it).
  // The bodies here (bytes, a stream) never make the constructor add a Content-Type.
  try {
    appendRequestHeaders(request.headers, req);
  } catch (err) {
    if (body instanceof ReadableStream) void body.cancel();
    throw err;
  }
  if (parts.body !== undefined) {
    request.headers.set('content-length', String(parts.body.byteLength));
    request.headers.delete('content-encoding');
    request.headers.delete('transfer-encoding');
  }
  return request;
}

function light(href: string, req: IncomingMessage, res: ServerResponse, body: Uint8Array | null): Request {
  let url: URL;
  try {
    // As the Request constructor would: the URL parsed and serialized, or a 400.
    url = new URL(href);
  } catch {
    throw new BadRequestError('The request target is not a valid URL.');
  }
  // An absolute-form target may carry userinfo, which a Request refuses.
  if (url.username !== '' || url.password !== '') throw new BadRequestError('The request target may not include credentials.');
  return lightRequest(url.href, req.method!, requestHeaders(req), res, body);
}
