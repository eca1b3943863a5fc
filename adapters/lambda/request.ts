// Event -> Web Request, one small reader per event kind. Each integration
// hands over the request differently: payload 2.0 keeps the raw query string
// and moves cookies to `cookies`; API Gateway REST decodes query values
// (re-encoded here); an ALB passes them still encoded (kept as they are).
// The path the client used may start with more than the service's routes (a
// REST API stage, a configured base path): that part becomes the mount prefix.
import { isRecord } from '../../lib/is-record.ts';
import { decodeEventBody } from './body.ts';
import { MalformedEventError } from './errors.ts';
import type { EventKind, HttpEventV1, HttpEventV2 } from './types.ts';

export interface EventRequestOptions {
  signal?: AbortSignal;
  /**
   * A path every request arrives under that the service's routes do not
   * include ('/prod' for an HTTP API stage other than $default, a custom
   * domain's base path): taken off the path and passed as the mount prefix.
   */
  basePath?: string;
}

/** A Request, and the prefix (as the client sent it) that links must carry: `service.fetch(request, { mountPrefix })`. */
export interface EventRequest {
  request: Request;
  mountPrefix: string;
}

// A bare host or IP literal with an optional port: anything else would let a
// caller steer the origin the service builds its links from.
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const METHOD = /^[A-Za-z]+$/;

function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new MalformedEventError(`The event has no ${what}.`);
  return value;
}

/** Name -> value(s) maps of the event: absent or null is empty; anything but strings is malformed. */
function entries(map: unknown, what: string, multi: boolean): Array<[string, string]> {
  if (map === undefined || map === null) return [];
  if (!isRecord(map)) throw new MalformedEventError(`The event's ${what} must be an object.`);
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(map)) {
    const values = multi ? value : [value];
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) {
      throw new MalformedEventError(`The event's ${what} must map names to ${multi ? 'lists of strings' : 'strings'}.`);
    }
    for (const v of values as string[]) out.push([name, v]);
  }
  return out;
}

function toHeaders(pairs: Array<[string, string]>): Headers {
  const headers = new Headers();
  const cookies: string[] = [];
  try {
    for (const [name, value] of pairs) {
      if (name.toLowerCase() === 'cookie') cookies.push(value);
      else headers.append(name, value);
    }
    // Cookie pairs are joined with "; ", not with the ", " Headers would use.
    if (cookies.length > 0) headers.set('cookie', cookies.join('; '));
  } catch {
    throw new MalformedEventError('The event carries a header that is not valid HTTP.');
  }
  return headers;
}

function origin(headers: Headers, domainName: unknown): string {
  const host = headers.get('host') ?? (typeof domainName === 'string' ? domainName : 'localhost');
  if (!HOST.test(host)) throw new MalformedEventError('The Host header is not valid.');
  // API Gateway and Function URLs are HTTPS only; an ALB says what the client used.
  const proto = headers.get('x-forwarded-proto')?.split(',')[0].trim().toLowerCase();
  return `${proto === 'http' ? 'http' : 'https'}://${host}`;
}

interface Parts {
  method: unknown;
  path: unknown;
  query: string;
  headers: Headers;
  domainName: unknown;
  /** What the integration itself took off the path (a REST API stage). */
  stagePrefix?: string;
}

// What the URL parser would take for syntax in a path API Gateway handed over
// decoded: `?` and `#` (a query, a fragment), `\` (a slash, in an https
// URL), blanks and control characters (trimmed at the end, tabs and newlines
// dropped anywhere), and a `%` that starts no escape. An encoded path has none
// of them, so it goes on unchanged; the parser encodes anything else itself.
const PATH_SYNTAX = /[\u0000-\u0020\u007f?#\\]|%(?![0-9A-Fa-f]{2})/g;

/** The path as the service must see it in a URL, percent-encoded where the URL parser would read syntax. */
const encodePathSyntax = (path: string): string => path.replace(PATH_SYNTAX, (c) => encodeURIComponent(c));

function build(parts: Parts, event: { body?: unknown; isBase64Encoded?: unknown }, opts: EventRequestOptions): EventRequest {
  const { headers, query } = parts;
  const verb = requireString(parts.method, 'HTTP method');
  if (!METHOD.test(verb)) throw new MalformedEventError("The event's HTTP method is not valid.");
  let target = requireString(parts.path, 'path');
  if (!target.startsWith('/')) throw new MalformedEventError('The event\'s path must start with "/".');
  let mountPrefix = parts.stagePrefix ?? '';
  const base = opts.basePath?.replace(/\/+$/, '');
  if (base && (target === base || target.startsWith(`${base}/`))) {
    target = target.slice(base.length) || '/';
    mountPrefix += base;
  }
  const upper = verb.toUpperCase();
  // fetch forbids a body on GET and HEAD; an ALB sends "" there anyway.
  const body = upper === 'GET' || upper === 'HEAD' ? null : decodeEventBody(event.body, event.isBase64Encoded);
  // The body is whole now: its framing is its length, whatever the client sent.
  headers.delete('transfer-encoding');
  if (body !== null) headers.set('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
  else headers.delete('content-length');
  const url = `${origin(headers, parts.domainName)}${encodePathSyntax(target)}${query ? `?${query}` : ''}`;
  try {
    return { request: new Request(url, { method: verb, headers, body, signal: opts.signal }), mountPrefix };
  } catch (err) {
    // e.g. TRACE, which fetch forbids, or a path the URL parser refuses.
    throw new MalformedEventError(err instanceof TypeError ? `The request is not valid: ${err.message}` : 'The request is not valid.');
  }
}

function fromV2(event: HttpEventV2, opts: EventRequestOptions): EventRequest {
  const headers = toHeaders(entries(event.headers, 'headers', false));
  if (event.cookies !== undefined && event.cookies !== null) {
    if (!Array.isArray(event.cookies) || event.cookies.some((c) => typeof c !== 'string')) {
      throw new MalformedEventError("The event's cookies must be a list of strings.");
    }
    // Payload 2.0 takes the Cookie header apart into `cookies`; it goes back together here.
    if (event.cookies.length > 0) headers.set('cookie', event.cookies.join('; '));
  }
  const query = event.rawQueryString ?? '';
  if (typeof query !== 'string') throw new MalformedEventError("The event's rawQueryString must be a string.");
  const { method } = event.requestContext.http;
  return build({ method, path: event.rawPath, query, headers, domainName: event.requestContext.domainName }, event, opts);
}

/**
 * A REST API on its execute-api address is called as /{stage}/path but
 * passes `path` without the stage; `requestContext.path` has it whole.
 */
function stagePrefix(event: HttpEventV1): string | undefined {
  const whole = (event.requestContext as { path?: unknown } | undefined)?.path;
  const { path } = event;
  if (typeof whole !== 'string' || typeof path !== 'string' || whole.length <= path.length || !whole.endsWith(path)) return undefined;
  const prefix = whole.slice(0, whole.length - path.length);
  return /^\/[^/?#\s]+$/.test(prefix) ? prefix : undefined;
}

function fromV1(event: HttpEventV1, kind: EventKind, opts: EventRequestOptions): EventRequest {
  const multi = isRecord(event.multiValueHeaders);
  const headers = toHeaders(entries(multi ? event.multiValueHeaders : event.headers, multi ? 'multiValueHeaders' : 'headers', multi));
  const multiQuery = isRecord(event.multiValueQueryStringParameters);
  const params = entries(
    multiQuery ? event.multiValueQueryStringParameters : event.queryStringParameters,
    multiQuery ? 'multiValueQueryStringParameters' : 'queryStringParameters',
    multiQuery,
  );
  const query =
    kind === 'v1'
      ? new URLSearchParams(params).toString()
      : // An ALB does not decode query parameters: they are still in their wire form.
        params.map(([k, v]) => `${k}=${v}`).join('&');
  const parts = { method: event.httpMethod, path: event.path, query, headers, domainName: event.requestContext?.domainName };
  return build(kind === 'v1' ? { ...parts, stagePrefix: stagePrefix(event) } : parts, event, opts);
}

/** The Request an event of this kind describes; MalformedEventError when it describes none. */
export function eventToRequest(event: unknown, kind: EventKind, opts: EventRequestOptions = {}): EventRequest {
  return kind === 'v2' ? fromV2(event as HttpEventV2, opts) : fromV1(event as HttpEventV1, kind, opts);
}
