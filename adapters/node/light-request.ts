// The Request of a request that carries no body (a GET poll, a HEAD, a
// DELETE), or a small one the adapter read whole (a job's submission): its
// method, URL, headers and signal are answered here, and undici's Request is
// built only when something asks for anything else. Building one costs more
// than the rest of a poll's conversion (about 8 µs of a 50 µs GET on Node 20:
// a URL parse, a HeadersList, webidl conversions and an AbortController), and
// the core's handlers read only those four, and a body read whole through
// FetchOptions.requestBody.
//
// It is a Request to every check (`instanceof Request`, Symbol.toStringTag)
// and every other member of Request.prototype works on the built one: the
// body (null, or the bytes read), clone(), text() and the rest. Requests with
// a body to stream keep the plain conversion (request.ts). The built Request
// takes a copy of the headers: the adapter hands the core a request nobody
// changes.
import type { ServerResponse } from 'node:http';
import { forwardToBuilt } from './built-on-need.ts';
import { clientSignal } from './client-signal.ts';

/** Methods that may come without a body and that fetch allows. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export const takesBodilessRequest = (method: string | undefined): boolean => method !== undefined && BODILESS.has(method);

class LightRequest {
  readonly #url: string;
  readonly #method: string;
  readonly #headers: Headers;
  readonly #body: Uint8Array | null;
  readonly #res: ServerResponse;
  #signal: AbortSignal | undefined;
  #built: Request | undefined;

  /** `url` is already serialized by the URL parser (as Request.url is). */
  constructor(url: string, method: string, headers: Headers, res: ServerResponse, body: Uint8Array | null) {
    this.#url = url;
    this.#method = method;
    this.#headers = headers;
    this.#body = body;
    this.#res = res;
  }

  get url(): string {
    return this.#url;
  }

  get method(): string {
    return this.#method;
  }

  get headers(): Headers {
    return this.#headers;
  }

  /** Aborts when the client goes away, as the plain conversion's does. */
  get signal(): AbortSignal {
    return (this.#signal ??= clientSignal(this.#res));
  }

  static built(r: LightRequest): Request {
    return (r.#built ??= new Request(r.#url, { method: r.#method, headers: r.#headers, body: r.#body }));
  }
}

// Everything else of Request.prototype runs on the built Request.
forwardToBuilt(LightRequest, Request, new Set(['url', 'method', 'headers', 'signal']), LightRequest.built);

/**
 * A Request over these parts, undici's built on first need. `url` must be a
 * parsed URL's href; `body` the whole body, already read (null for none).
 */
export function lightRequest(url: string, method: string, headers: Headers, res: ServerResponse, body: Uint8Array | null = null): Request {
  return new LightRequest(url, method, headers, res, body) as unknown as Request;
}
