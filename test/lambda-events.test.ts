// The buffered Lambda handler against each event version, in the shapes AWS
// documents (test/fixtures/lambda), invoked in process in front of the real
// service: the documented events become the right Requests, and JSON,
// multipart binary uploads and downloads, repeated query keys, cookies, HEAD
// and error envelopes round-trip in the result shape each integration wants;
// a path handed over decoded keeps its `?` and `#` as part of the path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaHandler, detectEvent, eventToRequest, type FetchService } from '../adapters/lambda/index.ts';
import { createService, type Service, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { blake3Of, concatBytes, expectEnvelope, randomBytes, trickyPayload } from './helpers/assets.ts';
import { type Harness, uploadForm } from './helpers/harness.ts';
import { withHeaders } from './helpers/jobs.ts';
import {
  callOf,
  eventFor,
  FIXTURE_KINDS,
  type FixtureKind,
  fixture,
  lambdaHarness,
  ORIGIN,
  responseOf,
  testContext,
} from './helpers/lambda-events.ts';

const TOKEN = 'lambda-secret';

/**
 * The real service, plus what a test needs to see the conversion itself:
 * `/probe` (and any path under it) answers with the Request as the service would get it, and an
 * `x-set-cookies` header (a JSON list) adds Set-Cookie fields to the
 * service's own answer (the service sets no cookies of its own).
 */
function withProbe(service: Service): FetchService {
  return {
    refuse: service.refuse,
    async fetch(request: Request, options?: { mountPrefix?: string }) {
      const url = new URL(request.url);
      if (url.pathname === '/probe' || url.pathname.startsWith('/probe/')) {
        return Response.json({
          url: request.url,
          method: request.method,
          query: [...url.searchParams],
          headers: Object.fromEntries(request.headers),
          body: request.body ? await request.text() : null,
        });
      }
      const response = await service.fetch(request, options);
      const wanted = request.headers.get('x-set-cookies');
      if (wanted === null) return response;
      const cookies = JSON.parse(wanted) as string[];
      const headers = new Headers(response.headers);
      for (const c of cookies) headers.append('set-cookie', c);
      return new Response(response.body, { status: response.status, headers });
    },
    idle: () => service.idle(),
  };
}

let service: Service;
let handler: ReturnType<typeof createLambdaHandler>;
beforeAll(async () => {
  service = await createService({ storage: createMemoryStorage(), token: TOKEN, logger: silentLogger, sweepIntervalMs: 0 });
  handler = createLambdaHandler(withProbe(service), { logger: silentLogger });
});
afterAll(() => service?.close());

describe('the documented events become Requests', () => {
  const cases: Array<[FixtureKind, { method: string; url: string; headers: Record<string, string>; body: string | null }]> = [
    [
      'http-api-v2',
      {
        method: 'POST',
        url: 'https://id.execute-api.us-east-1.amazonaws.com/my/path?parameter1=value1&parameter1=value2&parameter2=value',
        headers: { header1: 'value1', header2: 'value1,value2', cookie: 'cookie1; cookie2' },
        body: 'Hello from Lambda',
      },
    ],
    [
      'function-url',
      {
        method: 'POST',
        url: 'https://abcdefg.lambda-url.us-west-2.on.aws/my/path?parameter1=value1&parameter1=value2&parameter2=value',
        headers: { header1: 'value1', header2: 'value1,value2', cookie: 'cookie1; cookie2' },
        body: 'Hello from client!',
      },
    ],
    [
      'rest-api-v1',
      {
        method: 'GET',
        url: 'https://id.execute-api.us-east-1.amazonaws.com/my/path?parameter1=value1&parameter1=value2&parameter2=value',
        // multiValueHeaders is the complete set: both values of header2.
        headers: { header1: 'value1', header2: 'value1, value2' },
        body: null,
      },
    ],
    [
      'alb',
      {
        method: 'GET',
        url: 'http://lambda-alb-123578498.us-east-2.elb.amazonaws.com/lambda?query=1234ABCD',
        headers: { host: 'lambda-alb-123578498.us-east-2.elb.amazonaws.com', 'x-forwarded-proto': 'http', 'accept-encoding': 'gzip' },
        body: null,
      },
    ],
    [
      'alb-multi-value',
      {
        method: 'GET',
        url: 'https://lambda-846800462-us-east-2.elb.amazonaws.com/?myKey=val1&myKey=val2',
        headers: { cookie: 'name1=value1; name2=value2', 'content-type': 'text/plain', 'x-forwarded-for': '72.21.198.66' },
        // A GET carries no body in fetch, whatever the event says.
        body: null,
      },
    ],
  ];

  it.each(cases)('%s', async (kind, want) => {
    const event = fixture(kind);
    const detected = detectEvent(event);
    expect(detected).toBe({ 'http-api-v2': 'v2', 'function-url': 'v2', 'rest-api-v1': 'v1', alb: 'alb', 'alb-multi-value': 'alb-multi' }[kind]);
    const { request, mountPrefix } = eventToRequest(event, detected!);
    expect(mountPrefix).toBe('');
    expect(request.method).toBe(want.method);
    expect(request.url).toBe(want.url);
    for (const [name, value] of Object.entries(want.headers)) expect(request.headers.get(name), name).toBe(value);
    expect(request.body ? await request.text() : null).toBe(want.body);
  });
});

describe.each(FIXTURE_KINDS)('through %s', (kind) => {
  const log: Array<{ event: any; result: any }> = [];
  let plain: Harness;
  let h: Harness;
  let bytes: Uint8Array;
  let asset: any;
  const lastResult = () => log.at(-1)!.result;
  const lastEvent = () => log.at(-1)!.event;

  beforeAll(async () => {
    plain = lambdaHarness(kind, handler, service, log);
    h = withHeaders(plain, { authorization: `Bearer ${TOKEN}` });
    bytes = concatBytes(trickyPayload(), randomBytes(4096));
    const res = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(bytes, { content_type: 'image/png' }, `pic-${kind}.png`) });
    asset = await res.json();
    expect({ status: res.status, asset }).toMatchObject({ status: 201 });
  });

  it("the documented event as is: the reference's 404 for a path of no route (the dashboard for `/`), in the shape this integration accepts", async () => {
    const event = fixture(kind);
    const result = await handler(event, testContext());
    expect(result.isBase64Encoded).toBe(false);
    const res = responseOf(kind, result);
    const body = await res.text();
    if ((event as { path?: string }).path === '/')
      expect({ status: res.status, page: body.startsWith('<!doctype html>') }).toEqual({ status: 200, page: true });
    else expect({ status: res.status, body }).toEqual({ status: 404, body: '404: Not Found' });
  });

  it('a multipart upload arrives base64-encoded and is stored byte for byte', async () => {
    const upload = log.find((entry) => entry.event.httpMethod === 'POST' || entry.event.requestContext?.http?.method === 'POST')!;
    expect(upload.event.isBase64Encoded).toBe(true);
    expect(asset.hash).toBe(await blake3Of(bytes));
    expect(asset.size_bytes).toBe(bytes.byteLength);
    // Links are built from the origin the integration was called on.
    expect(asset.url.startsWith(`${ORIGIN[kind]}/api/v2/assets/${asset.id}/content?`)).toBe(true);
  });

  it('JSON GET: a text result', async () => {
    const res = await h.fetch(`/api/v2/assets/${asset.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(lastResult().isBase64Encoded).toBe(false);
    expect(await res.json()).toMatchObject({ id: asset.id, hash: asset.hash, content_type: 'image/png' });
  });

  it('download through the signed URL: base64 in the result, the same bytes out', async () => {
    const res = await plain.fetch(asset.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(lastResult().isBase64Encoded).toBe(true);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  it('HEAD: the headers of the content and an empty body', async () => {
    const res = await h.fetch(`/api/v2/assets/${asset.id}/content`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(bytes.byteLength));
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(lastResult().body).toBe('');
    expect(lastResult().isBase64Encoded).toBe(false);
  });

  it('repeated query keys and encoded values reach the service as sent', async () => {
    const res = await h.fetch('/probe?a=1&a=2&b=x%20y&c=%26%3D%2B&d=');
    const seen = (await res.json()) as any;
    const all = [
      ['a', '1'],
      ['a', '2'],
      ['b', 'x y'],
      ['c', '&=+'],
      ['d', ''],
    ];
    // A target group without multi-value headers passes the last value of a repeated key (AWS documents it so).
    expect(seen.query).toEqual(kind === 'alb' ? all.slice(1) : all);
    expect(seen.url.startsWith(`${ORIGIN[kind]}/probe?`)).toBe(true);
    // The signed URL still verifies with more keys after it: nothing was re-encoded on the way.
    const download = await plain.fetch(`${asset.url}&x=1&x=2`);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
  });

  it('cookies in: the Cookie header, however the integration carries it', async () => {
    const url = new URL(`${ORIGIN[kind]}/probe`);
    const event = eventFor(kind, {
      method: 'GET',
      url,
      headers: [
        ['cookie', 'a=1'],
        ['cookie', 'b=2; c=3'],
        ['x-tag', 'one'],
        ['x-tag', 'two'],
      ],
      body: null,
    });
    const seen = (await responseOf(kind, await handler(event, testContext())).json()) as any;
    // Single-value ALB: the last line of each name only.
    expect(seen.headers.cookie).toBe(kind === 'alb' ? 'b=2; c=3' : 'a=1; b=2; c=3');
    expect(seen.headers['x-tag']).toBe({ alb: 'two', 'http-api-v2': 'one,two', 'function-url': 'one,two' }[kind as string] ?? 'one, two');
  });

  it('cookies out: every Set-Cookie kept apart (cookies, or multiValueHeaders)', async () => {
    const cookies = ['s1=1; Path=/; HttpOnly', 's2=2; Expires=Wed, 21 Oct 2035 07:28:00 GMT; Secure'];
    const res = await h.fetch(`/api/v2/assets/${asset.id}`, { headers: { 'x-set-cookies': JSON.stringify(cookies) } });
    expect(res.status).toBe(200);
    const result = lastResult();
    if (kind === 'alb') {
      // One value per name is all this target group can return: the first cookie goes out.
      expect(res.headers.getSetCookie()).toEqual(cookies.slice(0, 1));
      expect((result as { statusDescription?: string }).statusDescription).toBe('200 OK');
      return;
    }
    expect(res.headers.getSetCookie()).toEqual(cookies);
    if (kind === 'http-api-v2' || kind === 'function-url') {
      expect(result.cookies).toEqual(cookies);
      expect(Object.keys(result.headers)).not.toContain('set-cookie');
    } else {
      expect(result.multiValueHeaders['set-cookie']).toEqual(cookies);
    }
    expect(await res.json()).toMatchObject({ id: asset.id });
  });

  it('an unknown route: the 404 envelope; a wrong method: 405 with Allow', async () => {
    await expectEnvelope(await h.fetch('/api/v2/nothing-here'), 404, 'not_found');
    const wrong = await h.fetch('/api/v2/jobs', { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(wrong.headers.get('allow')).toBe('POST, GET');
    await expectEnvelope(wrong, 405, 'method_not_allowed');
  });

  /** The event of a GET whose path arrives decoded (an HTTP API decodes `rawPath`, a REST API `path`), with the query q=1. */
  async function decodedPathEvent(path: string): Promise<any> {
    const call = await callOf(new Request(`${ORIGIN[kind]}/placeholder?q=1`, { headers: { authorization: `Bearer ${TOKEN}` } }));
    const event = eventFor(kind, call);
    if (kind === 'http-api-v2' || kind === 'function-url') Object.assign(event, { rawPath: path }).requestContext.http.path = path;
    else if (kind === 'rest-api-v1') Object.assign(event, { path }).requestContext.path = path;
    else event.path = path;
    return event;
  }

  it("a decoded path: `?` and `#` stay in the path, the query is the event's, encoded paths unchanged", async () => {
    const seenAt = async (path: string) => (await responseOf(kind, await handler(await decodedPathEvent(path), testContext())).json()) as any;
    const seen = await seenAt('/probe/what?is#this');
    expect(seen.url).toBe(`${ORIGIN[kind]}/probe/what%3Fis%23this?q=1`);
    expect(seen.query).toEqual([['q', '1']]);
    // Blanks, backslashes and a bare '%' would be trimmed, turned into '/' or fail to decode; an escape stays one.
    expect((await seenAt('/probe/a b\\c%d%2Fe ')).url).toBe(`${ORIGIN[kind]}/probe/a%20b%5Cc%25d%2Fe%20?q=1`);
  });

  it('a decoded path: an asset id followed by `?` or `#` is another id (404), not the asset', async () => {
    const found = responseOf(kind, await handler(await decodedPathEvent(`/api/v2/assets/${asset.id}`), testContext()));
    expect(found.status).toBe(200);
    for (const path of [`/api/v2/assets/${asset.id}?x=1`, `/api/v2/assets/${asset.id}#x`]) {
      await expectEnvelope(responseOf(kind, await handler(await decodedPathEvent(path), testContext())), 404, 'not_found');
    }
  });

  it('the event of each request was the kind under test', () => {
    const expected = { 'http-api-v2': 'v2', 'function-url': 'v2', 'rest-api-v1': 'v1', alb: 'alb', 'alb-multi-value': 'alb-multi' }[kind];
    expect(log.length).toBeGreaterThan(5);
    for (const { event } of log) expect(detectEvent(event)).toBe(expected);
    expect(lastEvent()).toBeDefined();
  });
});
