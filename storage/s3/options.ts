// Options of the S3 blob store, and the two ways they are usually given
// besides code: the standard AWS environment variables (passed in as an
// object, since this folder runs where `process` may not exist) and an
// `s3://bucket/prefix` URL.

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (an assumed role, Lambda's own) come with one. */
  sessionToken?: string;
}

/** How the store reaches the network: a Web `fetch`, given the signed request. */
export type S3Fetch = (request: Request) => Promise<Response>;

export interface S3BlobStoreOptions {
  bucket: string;
  /**
   * Put before every key (`photos/` stores `photos/<key>`); temporaries go
   * under `${prefix}.tmp/`. The store owns everything under it: the
   * service's orphan sweep removes listed objects that no asset knows, so
   * never share a prefix with other data. Default: none (the whole bucket).
   */
  prefix?: string;
  /** Origin (and optional path) of an S3-compatible service; default `https://s3.<region>.amazonaws.com`. */
  endpoint?: string;
  /** Signing region; default `us-east-1`. */
  region?: string;
  credentials?: S3Credentials;
  /**
   * Address objects as `<endpoint>/<bucket>/<key>` rather than
   * `<bucket>.<endpoint host>/<key>`. Most self-hosted services need it;
   * an endpoint that is an IP address or `localhost`, and a bucket name
   * with dots (no TLS certificate covers it as a host name), always get it.
   */
  forcePathStyle?: boolean;
  /** Bytes buffered per multipart part; default 8 MiB, at least 5 MiB (S3's smallest part but the last), at most 1 GiB. */
  partSizeBytes?: number;
  /** Keys per ListObjectsV2 page, 1..1000 (S3's most); default 1000. */
  maxKeys?: number;
  /** Further tries of a request S3 answered 5xx or 429 (or that failed in flight, where repeating it is safe); default 3. */
  retries?: number;
  /** Default: the global `fetch`. */
  fetch?: S3Fetch;
  /** Environment (`process.env`, Deno.env.toObject()) to fill credentials, region and endpoint from when not given. */
  env?: Record<string, string | undefined>;
}

const MIB = 1024 * 1024;
export const MIN_PART_BYTES = 5 * MIB;
export const DEFAULT_PART_BYTES = 8 * MIB;

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

/**
 * Credentials, region and endpoint from the variables the AWS SDKs and CLI
 * read: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN),
 * AWS_REGION or else AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 or else
 * AWS_ENDPOINT_URL. Only what is set (and not empty) is returned.
 */
export function s3OptionsFromEnv(env: Record<string, string | undefined>): Pick<S3BlobStoreOptions, 'credentials' | 'region' | 'endpoint'> {
  const out: Pick<S3BlobStoreOptions, 'credentials' | 'region' | 'endpoint'> = {};
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  // A key id without its secret (or the reverse) is no credential at all.
  if (accessKeyId && secretAccessKey) {
    const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
    out.credentials = sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
  }
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  if (region) out.region = region;
  const endpoint = nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  if (endpoint) out.endpoint = endpoint;
  return out;
}

/** S3's bucket naming rules (the DNS-compatible ones every region enforces now). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `s3://bucket/some/prefix` -> `{ bucket: 'bucket', prefix: 'some/prefix/' }`.
 * A prefix gets a trailing slash, so keys and temporaries sit in a folder of
 * their own rather than beside names that merely start alike.
 */
export function parseBlobsUrl(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/i.exec(url);
  if (!m) throw new TypeError(`not an s3://bucket/prefix URL: ${JSON.stringify(url)}`);
  const [, bucket, path = ''] = m;
  if (!BUCKET.test(bucket)) throw new TypeError(`invalid S3 bucket name: ${JSON.stringify(bucket)}`);
  const prefix = path.replace(/^\/+|\/+$/g, '');
  // `a//b`, `.` and `..` segments would be rewritten by URL normalisation on the way to S3.
  if (prefix !== '' && prefix.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new TypeError(`invalid S3 prefix: ${JSON.stringify(path)}`);
  }
  return { bucket, prefix: prefix === '' ? '' : `${prefix}/` };
}
