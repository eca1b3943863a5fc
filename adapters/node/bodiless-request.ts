// The Request of a request that carries no body (a GET poll, a HEAD, a
// DELETE): its method, URL, headers and signal are answered here, and
// undici's Request is built only when something asks for anything else.
// Building one costs more than the rest of a poll's conversion (about 8 µs
// of a 50 µs GET on Node 20: a URL parse, a HeadersList, webidl conversions
// and an AbortController), and the core's handlers read only those four.
//
// It is a Request to every check (`instanceof Request`, Symbol.toStringTag)
// and every other member of Request.prototype works on the built one: the
// body (null), clone(), text() and the rest. Requests with a body keep the
// plain conversion (request.ts). The built Request takes a copy of the
// headers: the adapter hands the core a request nobody changes.
import type { ServerResponse } from 'node:http';
import { forwardToBuilt } from './built-on-need.ts';
import { clientSignal } from './client-signal.ts';

/** Methods that may come without a body and that fetch allows. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export const takesBodilessRequest = (method: string | undefined): boolean => method !== undefined && BODILESS.has(method);

class BodilessRequest {
  readonly #url: string;
  readonly #method: string;
  readonly #headers: Headers;
  readonly #res: ServerResponse;
  #signal: AbortSignal | undefined;
  #built: Request | undefined;

  /** `url` is already serialized by the URL parser (as Request.url is). */
  constructor(url: string, method: string, headers: Headers, res: ServerResponse) {
    this.#url = url;
    this.#method = method;
    this.#headers = headers;
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

  static built(r: BodilessRequest): Request {
    return (r.#built ??= new Request(r.#url, { method: r.#method, headers: r.#headers }));
  }
}

// Everything else of Request.prototype runs on the built Request.
forwardToBuilt(BodilessRequest, Request, new Set(['url', 'method', 'headers', 'signal']), BodilessRequest.built);

/** A Request over these parts, undici's built on first need. `url` must be a parsed URL's href. */
export function bodilessRequest(url: string, method: string, headers: Headers, res: ServerResponse): Request {
  return new BodilessRequest(url, method, headers, res) as unknown as Request;
}
