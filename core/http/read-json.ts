// Reads a JSON request body with a size cap, answering 415, 413 or 400 in
// the envelope instead of letting a bad body become a 500.
import { concatBytes } from '../../lib/bytes.ts';
import { parseJson } from '../../lib/json.ts';
import { ApiError } from '../errors.ts';
import { requestOptions } from './request-options.ts';

const MAX_JSON_BYTES = 64 * 1024;

export interface ReadJsonOptions {
  /**
   * Parse whatever the Content-Type says (the cloud surface: clients of the
   * reference engine often post JSON as form-urlencoded or text/plain).
   */
  anyContentType?: boolean;
  /** What a body without bytes reads as; without it, an empty body is malformed JSON. */
  whenEmpty?: unknown;
}

/** Reads a small JSON body, refusing oversized or unparseable ones with 4xx. */
export async function readJson(request: Request, max = MAX_JSON_BYTES, opts: ReadJsonOptions = {}): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!opts.anyContentType && !/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
    throw new ApiError('unsupported_media_type', 'The body must be application/json.');
  }
  const tooLarge = () => new ApiError('payload_too_large', `The JSON body is larger than ${max} bytes.`, { limit_bytes: max });
  if (Number(request.headers.get('content-length') ?? 0) > max) throw tooLarge();
  // Read with a cap, since a chunked body announces no length.
  const chunks: Uint8Array[] = [];
  let size = 0;
  const whole = requestOptions(request)?.requestBody;
  if (whole !== undefined) {
    // The adapter read it already (FetchOptions.requestBody).
    if (whole.byteLength > max) throw tooLarge();
    chunks.push(whole);
    size = whole.byteLength;
  } else if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { value, done } = await reader.read().catch((err: unknown) => {
        // A runtime adapter's own body limit (status 413) is a size refusal.
        if ((err as { status?: unknown } | null)?.status === 413) throw tooLarge();
        throw new ApiError('malformed_request', 'The request body ended early.');
      });
      if (done) break;
      size += value.length;
      if (size > max) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  if (size === 0 && 'whenEmpty' in opts) return opts.whenEmpty;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(concatBytes(chunks));
  } catch {
    throw new ApiError('malformed_request', 'The body is not valid UTF-8.');
  }
  try {
    return parseJson(text);
  } catch {
    throw new ApiError('malformed_request', 'The body is not valid JSON.');
  }
}
