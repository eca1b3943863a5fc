// The S3 store's options with their defaults applied and checked once, at
// creation: credentials (given or from the environment), the bucket's base
// URL (virtual-hosted or path style) and the sizes S3 allows.
import { DEFAULT_PART_BYTES, MIN_PART_BYTES, type S3BlobStoreOptions, type S3Credentials, type S3Fetch, s3OptionsFromEnv } from './options.ts';

const MIB = 1024 * 1024;

/** The options with their defaults applied and checked once, at creation. */
export interface ResolvedS3Options {
  bucket: string;
  prefix: string;
  region: string;
  credentials: S3Credentials;
  /** Base URL of the bucket, ending in `/`: object keys are appended to it. */
  bucketUrl: string;
  partSizeBytes: number;
  maxKeys: number;
  retries: number;
  fetch: S3Fetch;
}

const isIpOrLocalhost = (hostname: string) => hostname === 'localhost' || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname) || hostname.startsWith('[');

function integerIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer in ${min}..${max}, not ${value}`);
  return value;
}

export function resolveS3Options(options: S3BlobStoreOptions): ResolvedS3Options {
  const fromEnv = options.env ? s3OptionsFromEnv(options.env) : {};
  const credentials = options.credentials ?? fromEnv.credentials;
  if (!credentials?.accessKeyId || !credentials.secretAccessKey) {
    throw new TypeError('S3 blob store: credentials are required (pass `credentials`, or `env` with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)');
  }
  const { bucket } = options;
  // Virtual-hosted addressing puts the name in a host name; path style in a path segment. Both need a plain name.
  if (typeof bucket !== 'string' || !/^[A-Za-z0-9._-]{3,255}$/.test(bucket)) throw new TypeError(`invalid S3 bucket name: ${JSON.stringify(bucket)}`);
  const prefix = options.prefix ?? '';
  // A `.` or `..` folder would be folded away by URL normalisation on the way out, naming other keys.
  if (/(^|\/)\.\.?\//.test(prefix)) throw new TypeError(`invalid S3 prefix: ${JSON.stringify(prefix)}`);
  const region = options.region ?? fromEnv.region ?? 'us-east-1';
  const endpoint = new URL(options.endpoint ?? fromEnv.endpoint ?? `https://s3.${region}.amazonaws.com`);
  if (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') throw new TypeError(`S3 endpoint must be http(s): ${endpoint.href}`);
  const basePath = endpoint.pathname.replace(/\/+$/, '');
  const pathStyle = options.forcePathStyle === true || isIpOrLocalhost(endpoint.hostname) || bucket.includes('.');
  const bucketUrl = pathStyle
    ? `${endpoint.protocol}//${endpoint.host}${basePath}/${encodeURIComponent(bucket)}/`
    : `${endpoint.protocol}//${bucket}.${endpoint.host}${basePath}/`;
  const fetcher = options.fetch ?? ((request: Request) => fetch(request));
  return {
    bucket,
    prefix,
    region,
    credentials,
    bucketUrl,
    // At most 1 GiB: each upload holds two parts in memory (S3 itself would take up to 5 GiB).
    partSizeBytes: integerIn('partSizeBytes', options.partSizeBytes ?? DEFAULT_PART_BYTES, MIN_PART_BYTES, 1024 * MIB),
    maxKeys: integerIn('maxKeys', options.maxKeys ?? 1000, 1, 1000),
    retries: integerIn('retries', options.retries ?? 3, 0, 10),
    fetch: fetcher,
  };
}
