// Checks a presigned S3 GET URL the way S3 does (AWS Signature Version 4,
// query-string authentication), written from AWS's description rather than
// taken from the signing library under test, and checked against AWS's own
// published example. Needed because s3rver does not check V4 signatures.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

/** URI-encode as SigV4 says: every byte but A-Z a-z 0-9 - _ . ~ percent-encoded, upper-case hex. */
const uriEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** `20130524T000000Z` as epoch ms. */
function amzDateMs(value: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return Number.NaN;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
}

/**
 * True when `url` is a presigned GET signed with `secretAccessKey` and not
 * expired at `now` (signing only the host header, as presigned GETs do).
 */
export function verifyPresignedGet(url: string, secretAccessKey: string, now = Date.now()): boolean {
  const u = new URL(url);
  const q = u.searchParams;
  const signature = q.get('X-Amz-Signature') ?? '';
  const [, date, region, service, terminator] = (q.get('X-Amz-Credential') ?? '').split('/');
  const amzDate = q.get('X-Amz-Date') ?? '';
  const expires = Number(q.get('X-Amz-Expires'));
  if (q.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || terminator !== 'aws4_request' || q.get('X-Amz-SignedHeaders') !== 'host') return false;
  if (!amzDate.startsWith(date) || !(expires >= 1 && expires <= 604800) || now > amzDateMs(amzDate) + expires * 1000) return false;

  const canonicalQuery = [...q]
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [uriEncode(name), uriEncode(value)])
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  // S3 encodes each path segment once (the URL holds them encoded already).
  const canonicalPath = u.pathname
    .split('/')
    .map((segment) => uriEncode(decodeURIComponent(segment)))
    .join('/');
  const canonicalRequest = ['GET', canonicalPath, canonicalQuery, `host:${u.host}\n`, 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request');
  const expected = hmac(key, stringToSign).toString('hex');
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}
