// The AWS integrations in front of a Lambda function, emulated as AWS
// documents them, for tests: a Request becomes the event API Gateway (HTTP
// API payload 2.0, REST API), a function URL or an ALB would send, built on
// the fixtures of test/fixtures/lambda; the result becomes the Response the
// client would get, and a result the integration would refuse fails loudly.
import { readFileSync } from 'node:fs';
import type { Harness, Mode } from './harness.ts';

export const FIXTURE_KINDS = ['http-api-v2', 'function-url', 'rest-api-v1', 'alb', 'alb-multi-value'] as const;
export type FixtureKind = (typeof FIXTURE_KINDS)[number];

/** The origin the service sees behind each fixture (its domain, and the scheme the client used). */
export const ORIGIN: Record<FixtureKind, string> = {
  'http-api-v2': 'https://id.execute-api.us-east-1.amazonaws.com',
  'function-url': 'https://abcdefg.lambda-url.us-west-2.on.aws',
  'rest-api-v1': 'https://id.execute-api.us-east-1.amazonaws.com',
  alb: 'http://lambda-alb-123578498.us-east-2.elb.amazonaws.com',
  'alb-multi-value': 'https://lambda-846800462-us-east-2.elb.amazonaws.com',
};

export const fixture = (kind: FixtureKind): any => JSON.parse(readFileSync(new URL(`../fixtures/lambda/${kind}.json`, import.meta.url), 'utf8'));

/** An HTTP request as it reaches the integration: header lines as sent (repeats kept). */
export interface Call {
  method: string;
  url: URL;
  headers: Array<[string, string]>;
  body: Uint8Array | null;
}

export async function callOf(request: Request): Promise<Call> {
  const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
  return { method: request.method, url: new URL(request.url), headers: [...request.headers], body };
}

// What the integrations pass as text; anything else arrives base64-encoded.
const TEXT = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)\b)/i;

function encodeBody(call: Call): { body: string | null; isBase64Encoded: boolean } {
  if (!call.body) return { body: null, isBase64Encoded: false };
  const type = call.headers.find(([n]) => n.toLowerCase() === 'content-type')?.[1] ?? '';
  if (TEXT.test(type)) return { body: new TextDecoder().decode(call.body), isBase64Encoded: false };
  return { body: Buffer.from(call.body).toString('base64'), isBase64Encoded: true };
}

function group(pairs: Array<[string, string]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of pairs) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

/** The query as the client wrote it (still percent-encoded), pair by pair. */
function rawQuery(url: URL): Array<[string, string]> {
  return url.search
    .slice(1)
    .split('&')
    .filter(Boolean)
    .map((p) => {
      const at = p.indexOf('=');
      return at < 0 ? [p, ''] : [p.slice(0, at), p.slice(at + 1)];
    });
}

const lower = (pairs: Array<[string, string]>) => pairs.map(([n, v]) => [n.toLowerCase(), v] as [string, string]);
const titleCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

function v2Event(kind: FixtureKind, call: Call): any {
  const e = fixture(kind);
  const headers = lower(call.headers).filter(([n]) => n !== 'cookie');
  if (!headers.some(([n]) => n === 'host')) headers.push(['host', e.requestContext.domainName]);
  // Payload 2.0: repeats joined with commas, cookies moved to `cookies`.
  e.headers = Object.fromEntries([...group(headers)].map(([n, vs]) => [n, vs.join(',')]));
  const cookies = lower(call.headers)
    .filter(([n]) => n === 'cookie')
    .flatMap(([, v]) => v.split(/;\s*/));
  if (cookies.length > 0) e.cookies = cookies;
  else delete e.cookies;
  e.rawPath = call.url.pathname;
  e.rawQueryString = call.url.search.slice(1);
  const params = [...call.url.searchParams];
  if (params.length > 0) e.queryStringParameters = Object.fromEntries([...group(params)].map(([k, vs]) => [k, vs.join(',')]));
  else delete e.queryStringParameters;
  e.requestContext.http.method = call.method;
  e.requestContext.http.path = decodeURIComponent(call.url.pathname);
  delete e.pathParameters;
  const { body, isBase64Encoded } = encodeBody(call);
  if (body === null) delete e.body;
  else e.body = body;
  e.isBase64Encoded = isBase64Encoded;
  return e;
}

function restEvent(call: Call): any {
  const e = fixture('rest-api-v1');
  // REST API keeps header names as sent; here they arrive in the common Title-Case.
  const headers = call.headers.map(([n, v]) => [titleCase(n), v] as [string, string]);
  if (!headers.some(([n]) => n === 'Host')) headers.push(['Host', e.requestContext.domainName]);
  const byName = group(headers);
  e.headers = Object.fromEntries([...byName].map(([n, vs]) => [n, vs.at(-1)]));
  e.multiValueHeaders = Object.fromEntries(byName);
  // Query values arrive decoded; the single-value map keeps the last one.
  const params = group([...call.url.searchParams]);
  e.queryStringParameters = params.size ? Object.fromEntries([...params].map(([k, vs]) => [k, vs.at(-1)])) : null;
  e.multiValueQueryStringParameters = params.size ? Object.fromEntries(params) : null;
  e.path = call.url.pathname;
  e.httpMethod = call.method;
  e.resource = '/{proxy+}';
  e.pathParameters = { proxy: call.url.pathname.slice(1) };
  Object.assign(e.requestContext, { httpMethod: call.method, path: call.url.pathname, resourcePath: '/{proxy+}' });
  Object.assign(e, encodeBody(call));
  return e;
}

function albEvent(kind: 'alb' | 'alb-multi-value', call: Call): any {
  const e = fixture(kind);
  const fixed = kind === 'alb' ? e.headers : Object.fromEntries(Object.entries(e.multiValueHeaders).map(([n, vs]) => [n, (vs as string[])[0]]));
  // The load balancer's own fields (host, x-forwarded-*) stay; the client's headers come in lower case.
  const base = Object.entries(fixed as Record<string, string>).filter(([n]) => n === 'host' || n.startsWith('x-'));
  const headers = group([...base, ...lower(call.headers)] as Array<[string, string]>);
  const query = group(rawQuery(call.url));
  delete e.headers;
  delete e.multiValueHeaders;
  delete e.queryStringParameters;
  delete e.multiValueQueryStringParameters;
  if (kind === 'alb') {
    // Without multi-value headers the load balancer passes the last value of each name.
    e.headers = Object.fromEntries([...headers].map(([n, vs]) => [n, vs.at(-1)]));
    e.queryStringParameters = Object.fromEntries([...query].map(([k, vs]) => [k, vs.at(-1)]));
  } else {
    e.multiValueHeaders = Object.fromEntries(headers);
    e.multiValueQueryStringParameters = Object.fromEntries(query);
  }
  e.path = call.url.pathname;
  e.httpMethod = call.method;
  const { body, isBase64Encoded } = encodeBody(call);
  e.body = body ?? '';
  e.isBase64Encoded = isBase64Encoded;
  return e;
}

/** The event this integration sends for the call. */
export function eventFor(kind: FixtureKind, call: Call): any {
  if (kind === 'http-api-v2' || kind === 'function-url') return v2Event(kind, call);
  if (kind === 'rest-api-v1') return restEvent(call);
  return albEvent(kind, call);
}

const ALLOWED: Record<FixtureKind, string[]> = {
  'http-api-v2': ['statusCode', 'headers', 'cookies', 'body', 'isBase64Encoded'],
  'function-url': ['statusCode', 'headers', 'cookies', 'body', 'isBase64Encoded'],
  // A REST API answers 502 "Malformed Lambda proxy response" to any other field.
  'rest-api-v1': ['statusCode', 'headers', 'multiValueHeaders', 'body', 'isBase64Encoded'],
  alb: ['statusCode', 'statusDescription', 'headers', 'body', 'isBase64Encoded'],
  'alb-multi-value': ['statusCode', 'statusDescription', 'multiValueHeaders', 'body', 'isBase64Encoded'],
};

/** Status and headers as the client gets them; throws on a head this integration would refuse. */
export function headersOf(kind: FixtureKind, result: any): Headers {
  const extra = Object.keys(result).filter((k) => !ALLOWED[kind].includes(k) && k !== 'body' && k !== 'isBase64Encoded');
  if (extra.length > 0) throw new Error(`${kind} does not accept result fields ${extra.join(', ')}`);
  if (!Number.isInteger(result.statusCode)) throw new Error(`${kind}: statusCode must be an integer, got ${result.statusCode}`);
  if (kind === 'alb-multi-value' && !result.multiValueHeaders) throw new Error('a multi-value target group needs multiValueHeaders');
  const headers = new Headers();
  const multi: Record<string, string[]> = result.multiValueHeaders ?? {};
  const multiNames = new Set(Object.keys(multi).map((n) => n.toLowerCase()));
  // REST API: when a name is in both maps, only the multiValueHeaders values are sent.
  for (const [n, v] of Object.entries(result.headers ?? {})) if (!multiNames.has(n.toLowerCase())) headers.append(n, v as string);
  for (const [n, vs] of Object.entries(multi)) for (const v of vs) headers.append(n, v);
  for (const c of result.cookies ?? []) headers.append('set-cookie', c);
  return headers;
}

/** The Response the client of this integration receives for the result. */
export function responseOf(kind: FixtureKind, result: any): Response {
  if (typeof result?.body !== 'string' || typeof result.isBase64Encoded !== 'boolean')
    throw new Error(`${kind}: result without body/isBase64Encoded`);
  const headers = headersOf(kind, result);
  const bytes = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body, 'utf8');
  const nullBody = [101, 204, 205, 304].includes(result.statusCode);
  return new Response(nullBody ? null : bytes, { status: result.statusCode, headers });
}

export const testContext = (remainingMs = 30_000) => {
  const end = Date.now() + remainingMs;
  return { awsRequestId: 'test-request', getRemainingTimeInMillis: () => end - Date.now() };
};

export type BufferedHandler = (event: unknown, context?: any) => Promise<any>;

/**
 * A Harness whose every request becomes an event of `kind` (a path is taken
 * under the integration's origin) and whose response is what `invoke` makes of it.
 */
export function eventHarness(mode: string, kind: FixtureKind, service: Harness['service'], invoke: (event: unknown) => Promise<Response>): Harness {
  const base = ORIGIN[kind];
  return {
    mode: mode as Mode,
    service,
    base,
    dir: '',
    async fetch(pathOrUrl, init) {
      const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : base + pathOrUrl;
      const call = await callOf(new Request(url, { ...init, duplex: 'half' } as RequestInit));
      return invoke(eventFor(kind, call));
    },
    blobFiles: async () => ({ blobs: [], temp: [] }),
    close: () => service.close(),
  };
}

/** A Harness whose requests go through the integration and the buffered handler. */
export function lambdaHarness(
  kind: FixtureKind,
  handler: BufferedHandler,
  service: Harness['service'],
  log: Array<{ event: any; result: any }> = [],
): Harness {
  return eventHarness(`lambda:${kind}`, kind, service, async (event) => {
    const result = await handler(event, testContext());
    log.push({ event, result });
    return responseOf(kind, result);
  });
}
