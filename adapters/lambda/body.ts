// Bodies across the JSON boundary of a Lambda invocation: an event body is
// text or base64 (`isBase64Encoded`); a result body goes back as text when
// its type is textual and valid UTF-8, as base64 otherwise, so bytes of an
// image survive the trip unchanged.
import { readCapped } from '../../lib/bytes.ts';
import { knownBody } from '../node/known-body.ts';
import { MalformedEventError } from './errors.ts';

// Standard alphabet with padding, as AWS encodes; Buffer alone would skip junk silently.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The request body of an event: null when there is none. */
export function decodeEventBody(body: unknown, isBase64Encoded: unknown): Uint8Array | string | null {
  if (body === undefined || body === null || body === '') return null;
  if (typeof body !== 'string') throw new MalformedEventError('The event body must be a string.');
  if (isBase64Encoded !== undefined && typeof isBase64Encoded !== 'boolean') {
    throw new MalformedEventError('isBase64Encoded must be true or false.');
  }
  if (!isBase64Encoded) return body;
  if (!BASE64.test(body)) throw new MalformedEventError('The event body is marked base64 but is not valid base64.');
  const bytes = Buffer.from(body, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const TEXTUAL =
  /^(?:text\/[\w.+-]+|application\/(?:json|xml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|(?:[\w.+-]+\+(?:json|xml))))(?:[\s;]|$)/i;

/** Whether a body of this type can travel as a JSON string. */
export function isTextual(headers: Headers): boolean {
  // Compressed text is bytes.
  if (headers.has('content-encoding') && headers.get('content-encoding') !== 'identity') return false;
  return TEXTUAL.test(headers.get('content-type') ?? '');
}

/** The response is larger than a result can carry. */
export class ResultTooLargeError extends Error {
  override name = 'ResultTooLargeError';
  constructor(readonly limit: number) {
    super(`The response body is larger than ${limit} bytes once encoded.`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The whole body as a result field; `limit` bounds the encoded length. */
export async function encodeResultBody(response: Response, limit: number, head = false): Promise<{ body: string; isBase64Encoded: boolean }> {
  const known = knownBody(response);
  if (head || response.status === 204 || response.status === 304) {
    if (known === undefined) await response.body?.cancel().catch(() => {});
    return { body: '', isBase64Encoded: false };
  }
  if (known !== undefined) {
    if (known.length > limit) throw new ResultTooLargeError(limit);
    return { body: known, isBase64Encoded: false };
  }
  if (!response.body) return { body: '', isBase64Encoded: false };
  // Base64 grows bytes by a third; stop reading as soon as even raw bytes cannot fit.
  const bytes = await readCapped(response.body, limit, () => {
    throw new ResultTooLargeError(limit);
  });
  if (isTextual(response.headers)) {
    try {
      return { body: utf8.decode(bytes), isBase64Encoded: false };
    } catch {
      // Says text, is not UTF-8: sent as the bytes it is.
    }
  }
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  if (body.length > limit) throw new ResultTooLargeError(limit);
  return { body, isBase64Encoded: true };
}
