// The signed HTTP layer under the S3 blob store: builds object URLs, signs
// with aws4fetch (SigV4 over WebCrypto, so any runtime with fetch will do),
// sends through the configured fetch and retries what S3 says to retry.
import { AwsClient } from 'aws4fetch';
import type { ResolvedS3Options } from './resolve-options.ts';
import { errorOf } from './xml.ts';

/** Throttled or a passing server-side trouble (not 501 Not Implemented, which stays so). */
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
/** Codes S3 documents as worth another try; ConditionalRequestConflict is a conditional write that raced another. */
const RETRY_CODES = new Set(['InternalError', 'SlowDown', 'ServiceUnavailable', 'RequestTimeout', 'ConditionalRequestConflict']);

/** A refusal or failure S3 answered, with its status and S3 error code. */
export class S3Error extends Error {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`S3 ${operation}: ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`);
    this.name = 'S3Error';
  }

  /** What S3 (and its SDKs) treat as "try again": throttling and server-side trouble. */
  get retryable(): boolean {
    return RETRY_STATUSES.has(this.status) || RETRY_CODES.has(this.code);
  }
}

export interface S3Request {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  /** Full object key (prefix included); omitted for requests on the bucket. */
  key?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
}

export interface S3Client {
  /**
   * Sends `request`, again after an answer S3 calls retryable (429, 5xx but
   * 501, SlowDown, ...) and, for all but POST (whose repetition could do
   * twice what once did), after a failure in flight. Resolves with
   * `read(response)` once the status is in `accept`; any other status is
   * thrown as an S3Error. A retryable S3Error thrown by `read` (a 200 that
   * carries an `<Error>`) is tried again alike.
   */
  send<T>(operation: string, request: S3Request, accept: readonly number[], read: (response: Response) => Promise<T>): Promise<T>;
  /** A presigned GET of `key`, valid for `expiresInSeconds`, with extra (signed) query parameters. */
  presignGet(key: string, expiresInSeconds: number, query: Record<string, string>): Promise<string>;
  /** The value of `x-amz-copy-source` naming `key` in this bucket. */
  copySource(key: string): string;
}

/** Full jitter, doubling from 50 ms, at most 2 s: what the AWS SDKs do, smaller. */
const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2000, 50 * 2 ** attempt)));

/** Each segment percent-encoded, the slashes kept: S3 keys are paths in the URL. */
const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');

export function createS3Client(options: ResolvedS3Options): S3Client {
  const { credentials, region, bucketUrl, retries, fetch } = options;
  // retries: 0 here, since aws4fetch would retry through the global fetch; this layer retries through ours.
  const signer = new AwsClient({ ...credentials, service: 's3', region, retries: 0 });

  const urlOf = (key: string | undefined, query: Record<string, string> = {}) => {
    const url = new URL(bucketUrl + (key === undefined ? '' : encodeKey(key)));
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url.href;
  };

  async function attempt(request: S3Request): Promise<Response> {
    const signed = await signer.sign(urlOf(request.key, request.query), {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
    return fetch(signed);
  }

  async function failure(operation: string, response: Response): Promise<S3Error> {
    const text = await response.text().catch(() => '');
    const err = errorOf(text);
    return new S3Error(operation, response.status, err?.code ?? '', err?.message ?? '');
  }

  return {
    async send(operation, request, accept, read) {
      for (let tries = 0; ; tries++) {
        const last = tries >= retries;
        let response: Response;
        try {
          response = await attempt(request);
        } catch (err) {
          if (last || request.method === 'POST') throw err;
          await backoff(tries);
          continue;
        }
        if (accept.includes(response.status)) {
          try {
            return await read(response);
          } catch (err) {
            if (last || !(err instanceof S3Error && err.retryable)) throw err;
            await backoff(tries);
            continue;
          }
        }
        const err = await failure(operation, response);
        if (last || !err.retryable) throw err;
        await backoff(tries);
      }
    },

    async presignGet(key, expiresInSeconds, query) {
      const url = urlOf(key, { ...query, 'X-Amz-Expires': String(expiresInSeconds) });
      const signed = await signer.sign(url, { method: 'GET', aws: { signQuery: true } });
      return signed.url;
    },

    copySource(key) {
      return `/${encodeURIComponent(options.bucket)}/${encodeKey(key)}`;
    },
  };
}
