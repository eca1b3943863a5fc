// JSON responses whose bytes are known when they are built, for the adapters
// that write a response themselves (Node http, and Lambda on Node). The core
// builds its hot JSON answers (a job, an asset) with the adapter's
// `jsonResponse` (FetchOptions); the one here carries no Web stream at all
// until some JavaScript asks for its body (building one is most of what a
// small JSON response costs on Node 20), and `knownBody` hands the writer
// the text to send with a Content-Length.
import { stringifyJson } from '../../lib/json.ts';

/**
 * A Response whose body stream is made only when read: status and headers
 * are the real ones; `body`, the readers and `clone` work on a Response built
 * on first use. Only for callers that read the body from JavaScript or
 * through `knownBody`, never handed to a runtime's native server.
 */
class DeferredBodyResponse extends Response {
  readonly #text: string;
  #real: Response | undefined;

  constructor(text: string, init: ResponseInit) {
    super(null, init);
    this.#text = text;
  }

  static textOf(r: Response): string | undefined {
    return #text in r ? (r as DeferredBodyResponse).#text : undefined;
  }

  static materialized(r: DeferredBodyResponse): Response {
    return (r.#real ??= new Response(r.#text, { status: r.status, statusText: r.statusText, headers: r.headers }));
  }

  static used(r: DeferredBodyResponse): boolean {
    return r.#real?.bodyUsed ?? false;
  }

  static copy(r: DeferredBodyResponse): DeferredBodyResponse {
    if (DeferredBodyResponse.used(r)) throw new TypeError('Response.clone: Body has already been consumed.');
    return new DeferredBodyResponse(r.#text, { status: r.status, statusText: r.statusText, headers: new Headers(r.headers) });
  }
}

// On the prototype, where Response keeps them too (lib.dom types them as properties, hence not class members).
const real = DeferredBodyResponse.materialized;
Object.defineProperties(DeferredBodyResponse.prototype, {
  body: {
    get(this: DeferredBodyResponse) {
      return real(this).body;
    },
    configurable: true,
  },
  bodyUsed: {
    get(this: DeferredBodyResponse) {
      return DeferredBodyResponse.used(this);
    },
    configurable: true,
  },
  clone: {
    value(this: DeferredBodyResponse) {
      return DeferredBodyResponse.copy(this);
    },
    writable: true,
    configurable: true,
  },
  ...Object.fromEntries(
    ['arrayBuffer', 'blob', 'bytes', 'formData', 'json', 'text'].map((name) => [
      name,
      {
        value(this: DeferredBodyResponse) {
          return (real(this) as unknown as Record<string, () => unknown>)[name]();
        },
        writable: true,
        configurable: true,
      },
    ]),
  ),
});

const JSON_TYPE = Object.freeze({ 'content-type': 'application/json' });

/**
 * The headers with a content-type, as Response.json sets it unless one is
 * given. A plain record stays a record (the Response copies it into its own
 * Headers either way; a Headers object here would be built only to be copied).
 */
function withJsonType(headers: ResponseInit['headers']): NonNullable<ResponseInit['headers']> {
  if (headers === undefined) return JSON_TYPE;
  if (headers instanceof Headers || Array.isArray(headers) || typeof headers !== 'object') {
    const copy = new Headers(headers);
    if (!copy.has('content-type')) copy.set('content-type', 'application/json');
    return copy;
  }
  for (const name of Object.keys(headers)) if (name.toLowerCase() === 'content-type') return headers;
  return Object.assign({}, headers, JSON_TYPE);
}

/**
 * Like `Response.json(value, init)`, with the body known to `knownBody` and
 * no stream made unless JavaScript reads it: the Node adapters'
 * FetchOptions.jsonResponse. Never for a runtime's native server.
 */
export function deferredJsonResponse(value: unknown, init?: ResponseInit): Response {
  const text = stringifyJson(value) as string | undefined;
  // As Response.json does: undefined, a function or a symbol has no JSON form.
  if (text === undefined) throw new TypeError('Value is not JSON serializable');
  return deferredJsonTextResponse(text, init);
}

/** The same over JSON text already serialized: the Node adapters' FetchOptions.jsonTextResponse. */
export function deferredJsonTextResponse(text: string, init?: ResponseInit): Response {
  return new DeferredBodyResponse(text, { status: init?.status, statusText: init?.statusText, headers: withJsonType(init?.headers) });
}

/**
 * The whole body of a response built by `deferredJsonResponse`, or undefined
 * for any other response. Reading it does not touch `response.body`; a
 * caller that uses it must not read the stream as well.
 */
export function knownBody(response: Response): string | undefined {
  return DeferredBodyResponse.textOf(response);
}
