// JSON responses whose bytes are known when they are built, for the adapters
// that write a response themselves (Node http, and Lambda on Node). The core
// builds its hot JSON answers (a job, an asset) with the adapter's
// `jsonResponse` (FetchOptions); the one here carries no Web stream at all
// until some JavaScript asks for its body (building one is most of what a
// small JSON response costs on Node 20), and `knownBody` hands the writer
// the text to send with a Content-Length. An event stream's answer
// (`eventStreamResponse`) is built the same way over its SSE source, which
// the Node writer attaches to the socket (`knownEventSource`).
import type { SseSource } from '../../core/jobs/sse.ts';
import { stringifyJson } from '../../lib/json.ts';
import { forwardToBuilt } from './built-on-need.ts';

/** Response members answered here; every other one of Response.prototype runs on the built Response. */
const OWN = new Set(['status', 'statusText', 'ok', 'headers', 'body', 'bodyUsed', 'clone', 'type', 'url', 'redirected']);

/**
 * A Response for JavaScript (`instanceof Response`, status, headers,
 * readers, body, clone) that builds undici's Response only when asked for
 * its body: status and text are kept here, the headers as given until read.
 * Building a Response and its Headers, and iterating them back, cost a
 * known-body answer more than writing it (a poll of a finished job). Only
 * for callers that read the body from JavaScript or through `knownBody`,
 * never handed to a runtime's native server.
 */
class DeferredBodyResponse {
  /** The JSON text, or the SSE source whose frames are the body. */
  readonly #body: string | SseSource;
  readonly #status: number;
  readonly #statusText: string;
  readonly #init: NonNullable<ResponseInit['headers']>;
  #headers: Headers | undefined;
  #real: Response | undefined;

  constructor(body: string | SseSource, status: number, statusText: string, headers: NonNullable<ResponseInit['headers']>) {
    this.#body = body;
    this.#status = status;
    this.#statusText = statusText;
    this.#init = headers;
  }

  get status(): number {
    return this.#status;
  }

  get statusText(): string {
    return this.#statusText;
  }

  get ok(): boolean {
    return this.#status >= 200 && this.#status <= 299;
  }

  get type(): 'default' {
    return 'default';
  }

  get url(): string {
    return '';
  }

  get redirected(): boolean {
    return false;
  }

  /** Built on first read; from then on the writer sends what it holds (a caller may have changed it). */
  get headers(): Headers {
    return (this.#headers ??= new Headers(this.#init));
  }

  get body(): ReadableStream<Uint8Array> | null {
    return DeferredBodyResponse.real(this).body;
  }

  get bodyUsed(): boolean {
    return this.#real?.bodyUsed ?? false;
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    // A live stream is teed by the built Response, as any stream body is.
    if (typeof this.#body !== 'string') return DeferredBodyResponse.real(this).clone();
    return new DeferredBodyResponse(this.#body, this.#status, this.#statusText, new Headers(this.headers)) as unknown as Response;
  }

  static real(r: DeferredBodyResponse): Response {
    const body = typeof r.#body === 'string' ? r.#body : r.#body.stream;
    return (r.#real ??= new Response(body, { status: r.#status, statusText: r.#statusText, headers: r.headers }));
  }

  static textOf(r: unknown): string | undefined {
    const body = DeferredBodyResponse.is(r) ? r.#body : undefined;
    return typeof body === 'string' ? body : undefined;
  }

  /** The SSE source of an event stream's answer, while nothing has read its body as a Web stream. */
  static sourceOf(r: unknown): SseSource | undefined {
    if (!DeferredBodyResponse.is(r) || r.#real !== undefined) return undefined;
    const body = r.#body;
    return typeof body === 'string' ? undefined : body;
  }

  static is(r: unknown): r is DeferredBodyResponse {
    return r !== null && typeof r === 'object' && #body in r;
  }

  /** The header fields as given, when nobody has read `headers` and they are a plain record; else undefined. */
  static givenRecord(r: DeferredBodyResponse): Record<string, string> | undefined {
    const init = r.#init;
    if (r.#headers !== undefined || init instanceof Headers || Array.isArray(init)) return undefined;
    return init as Record<string, string>;
  }
}

// Everything else of Response.prototype (arrayBuffer, blob, formData, json, text, bytes, ...) on the built one.
forwardToBuilt(DeferredBodyResponse, Response, OWN, DeferredBodyResponse.real);

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
  const status = init?.status ?? 200;
  // What the Response constructor would refuse, refused the same way.
  if (!Number.isInteger(status) || status < 200 || status > 599)
    throw new RangeError(`init["status"] must be in the range of 200 to 599, inclusive.`);
  const headers = withJsonType(init?.headers);
  return new DeferredBodyResponse(text, status, init?.statusText ?? '', headers) as unknown as Response;
}

/**
 * The whole body of a response built by `deferredJsonResponse`, or undefined
 * for any other response. Reading it does not touch `response.body`; a
 * caller that uses it must not read the stream as well.
 */
export function knownBody(response: Response): string | undefined {
  return DeferredBodyResponse.textOf(response);
}

/**
 * The header fields of a response built here, as the caller gave them
 * (names in any case), when nothing has read or changed its `headers`; else
 * undefined, and the writer reads `headers` as for any Response.
 */
export function knownHeaders(response: Response): Record<string, string> | undefined {
  return DeferredBodyResponse.is(response) ? DeferredBodyResponse.givenRecord(response) : undefined;
}

/**
 * An answer carrying an SSE stream whose frames the writer takes from
 * `source` (`knownEventSource`), with no Web stream made unless JavaScript
 * reads the body: the Node adapter's FetchOptions.eventStreamResponse.
 */
export function deferredEventStreamResponse(source: SseSource, init?: ResponseInit): Response {
  return new DeferredBodyResponse(source, init?.status ?? 200, init?.statusText ?? '', init?.headers ?? {}) as unknown as Response;
}

/**
 * The SSE source of a response built by `deferredEventStreamResponse`, while
 * its body is unread; else undefined. A writer that takes it attaches a sink
 * and must not read the body as well.
 */
export function knownEventSource(response: Response): SseSource | undefined {
  return DeferredBodyResponse.sourceOf(response);
}
