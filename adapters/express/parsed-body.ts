// The request body again, as bytes, when a body parser (express.json(),
// express.raw(), express.text(), express.urlencoded()) already read it off
// the socket before the service's turn: rebuilt from what it left in req.body.
import type { IncomingMessage } from 'node:http';
import { hasBody } from '../node/request-body.ts';

const encoder = new TextEncoder();

/** True when the body was read to its end by someone else (the same test body-parser makes). */
export function bodyWasRead(req: IncomingMessage): boolean {
  return hasBody(req) && req.complete && !req.readable;
}

function isUrlEncoded(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** Pairs of a parsed form: repeated names for lists, `a[b]` for the nested objects of the extended parser. */
function formPairs(value: unknown, name: string, out: [string, string][]): void {
  if (Array.isArray(value)) for (const item of value) formPairs(item, name, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) formPairs(inner, name === '' ? key : `${name}[${key}]`, out);
  } else if (value !== undefined) out.push([name, String(value)]);
}

/**
 * The bytes a parsed body stands for: a Buffer as it is, a string in UTF-8,
 * an object as a form when the request was a form, else as JSON (what
 * express.json() parsed it from). Undefined when the parser left nothing.
 */
export function parsedBodyBytes(body: unknown, contentType: string | undefined): Uint8Array | undefined {
  if (body === undefined) return undefined;
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return encoder.encode(body);
  if (isUrlEncoded(contentType) && body !== null && typeof body === 'object') {
    const pairs: [string, string][] = [];
    formPairs(body, '', pairs);
    return encoder.encode(new URLSearchParams(pairs).toString());
  }
  return encoder.encode(JSON.stringify(body));
}
