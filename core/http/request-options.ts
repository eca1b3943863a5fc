// What the adapter said of one request (`service.fetch(request, options)`):
// where it is mounted and how it answers. Kept beside the Request for the
// request's lifetime, so a handler deep down finds it without another
// parameter on every function between.

import { parseJson } from '../../lib/json.ts';
import type { SseSource } from '../jobs/sse.ts';
import type { FetchOptions } from '../types.ts';
import { respondJson, respondJsonText } from './json-response.ts';

export interface RequestOptions {
  /** Normalized: '' at the root, else '/a/b'. */
  mountPrefix: string;
  jsonResponse: FetchOptions['jsonResponse'];
  jsonTextResponse: FetchOptions['jsonTextResponse'];
  eventStreamResponse: FetchOptions['eventStreamResponse'];
  requestBody: Uint8Array | undefined;
  buffered: boolean;
}

const byRequest = new WeakMap<Request, RequestOptions>();

/**
 * A mount prefix as links use it: '' at the root, else '/a/b' with no
 * trailing slash. It is a path as sent on the wire (percent-encoded), put in
 * front of links verbatim; anything that is not a path is a mistake of the
 * adapter's configuration.
 */
export function normalizeMountPrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  if (trimmed !== '' && !/^\/[^?#\s]*$/.test(trimmed)) {
    throw new TypeError(`A mount prefix must be a path such as "/graph", got ${JSON.stringify(prefix)}.`);
  }
  return trimmed;
}

/** Records the adapter's options; throws TypeError for a mount prefix that is not a path. */
export function setRequestOptions(request: Request, options: FetchOptions): void {
  // A runtime may hand its own second argument (Bun's server, Deno's info): only the known fields, of the right type, count.
  const prefix = typeof options.mountPrefix === 'string' ? normalizeMountPrefix(options.mountPrefix) : '';
  const jsonResponse = typeof options.jsonResponse === 'function' ? options.jsonResponse : undefined;
  const jsonTextResponse = typeof options.jsonTextResponse === 'function' ? options.jsonTextResponse : undefined;
  const eventStreamResponse = typeof options.eventStreamResponse === 'function' ? options.eventStreamResponse : undefined;
  const requestBody = options.requestBody instanceof Uint8Array ? options.requestBody : undefined;
  const buffered = options.buffered === true;
  if (
    prefix !== '' ||
    jsonResponse !== undefined ||
    jsonTextResponse !== undefined ||
    eventStreamResponse !== undefined ||
    requestBody !== undefined ||
    buffered
  ) {
    byRequest.set(request, { mountPrefix: prefix, jsonResponse, jsonTextResponse, eventStreamResponse, requestBody, buffered });
  }
}

export function requestOptions(request: Request): RequestOptions | undefined {
  return byRequest.get(request);
}

/** A JSON answer built the adapter's way (FetchOptions.jsonResponse), else `Response.json`. */
export function jsonResponse(request: Request, value: unknown, init: ResponseInit): Response {
  const build = byRequest.get(request)?.jsonResponse;
  return build ? build(value, init) : respondJson(value, init);
}

/** A JSON answer whose text is already made, built the adapter's way (FetchOptions.jsonTextResponse). */
export function jsonTextResponse(request: Request, text: string, init: ResponseInit): Response {
  const options = byRequest.get(request);
  if (options?.jsonTextResponse) return options.jsonTextResponse(text, init);
  // An adapter that builds JSON answers from values only: it gets the value back.
  if (options?.jsonResponse) return options.jsonResponse(parseJson(text), init);
  return respondJsonText(text, init);
}

/** An answer carrying an SSE stream, built the adapter's way (FetchOptions.eventStreamResponse), else a Response over its Web stream. */
export function eventStreamResponse(request: Request, source: SseSource, init: ResponseInit): Response {
  const build = byRequest.get(request)?.eventStreamResponse;
  return build ? build(source, init) : new Response(source.stream, init);
}
