// Events the buffered and streaming Lambda handlers cannot read: a 400 in the
// v2 error envelope, in the result shape of the integration when it can be
// told, and never a throw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaHandler, createLambdaStreamHandler } from '../adapters/lambda/index.ts';
import { createService, type Service, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { expectEnvelope } from './helpers/assets.ts';
import { type FixtureKind, fixture, headersOf, responseOf, testContext } from './helpers/lambda-events.ts';
import { installFakeRuntime, invokeStreaming, removeFakeRuntime, type StreamHandler } from './helpers/lambda-runtime.ts';

let service: Service;
let handler: ReturnType<typeof createLambdaHandler>;
let streamHandler: StreamHandler;
beforeAll(async () => {
  service = await createService({ storage: createMemoryStorage(), logger: silentLogger, sweepIntervalMs: 0 });
  handler = createLambdaHandler(service, { logger: silentLogger });
  installFakeRuntime();
  streamHandler = createLambdaStreamHandler(service, { logger: silentLogger }) as unknown as StreamHandler;
});
afterAll(async () => {
  removeFakeRuntime();
  await service?.close();
});

/** A fixture with some fields changed (undefined deletes one); `path` reaches into requestContext. */
function edit(kind: FixtureKind, changes: Record<string, unknown>): any {
  const e = fixture(kind);
  for (const [key, value] of Object.entries(changes)) {
    const parts = key.split('.');
    const last = parts.pop()!;
    const target = parts.reduce((o, k) => o[k], e);
    if (value === undefined) delete target[last];
    else target[last] = value;
  }
  return e;
}

/** Not an HTTP event at all: the shape no integration would refuse. */
const UNKNOWN: Array<[string, unknown]> = [
  ['null', null],
  ['undefined', undefined],
  ['a string', 'GET /'],
  ['a number', 42],
  ['an array', [{ httpMethod: 'GET', path: '/' }]],
  ['an empty object', {}],
  ['an unrelated event (S3)', { Records: [{ eventSource: 'aws:s3', s3: { bucket: { name: 'b' } } }] }],
  ['payload 2.0 without requestContext.http', edit('http-api-v2', { 'requestContext.http': undefined })],
];

/** Events of a known kind that cannot become a Request. */
const BROKEN: Array<[string, FixtureKind, any]> = [
  ['v2 without a method', 'http-api-v2', edit('http-api-v2', { 'requestContext.http.method': undefined })],
  ['v2 without rawPath', 'function-url', edit('function-url', { rawPath: undefined })],
  ['v2 rawPath not starting with /', 'function-url', edit('function-url', { rawPath: 'my/path' })],
  ['v2 bad base64 body', 'http-api-v2', edit('http-api-v2', { body: 'not base64!', isBase64Encoded: true })],
  ['v2 base64 with bad padding', 'function-url', edit('function-url', { body: 'QUJD=', isBase64Encoded: true })],
  ['v2 isBase64Encoded not a boolean', 'function-url', edit('function-url', { body: 'QUJD', isBase64Encoded: 'yes' })],
  ['v2 cookies not a list', 'http-api-v2', edit('http-api-v2', { cookies: 'a=1' })],
  ['v2 headers not an object', 'http-api-v2', edit('http-api-v2', { headers: 'host: x' })],
  ['v2 header value with a line break', 'http-api-v2', edit('http-api-v2', { 'headers.header1': 'a\r\nx-injected: 1' })],
  ['v2 Host that is not a host', 'function-url', edit('function-url', { headers: { host: 'evil.example/a?b' } })],
  ['v2 body not a string', 'function-url', edit('function-url', { body: { json: true } })],
  ['v1 without a path', 'rest-api-v1', edit('rest-api-v1', { path: undefined })],
  ['v1 method not a token', 'rest-api-v1', edit('rest-api-v1', { httpMethod: 'GE T' })],
  ['v1 TRACE, which fetch forbids', 'rest-api-v1', edit('rest-api-v1', { httpMethod: 'TRACE' })],
  ['v1 empty method', 'rest-api-v1', edit('rest-api-v1', { httpMethod: '' })],
  ['v1 bad base64 body', 'rest-api-v1', edit('rest-api-v1', { httpMethod: 'POST', body: '@@@@', isBase64Encoded: true })],
  ['v1 multiValueHeaders with a bare string', 'rest-api-v1', edit('rest-api-v1', { 'multiValueHeaders.header1': 'value1' })],
  ['v1 query value not a string', 'rest-api-v1', edit('rest-api-v1', { multiValueQueryStringParameters: null, queryStringParameters: { a: 1 } })],
  ['ALB without a method', 'alb', edit('alb', { httpMethod: null })],
  ['ALB bad base64 body', 'alb', edit('alb', { httpMethod: 'POST', body: 'a', isBase64Encoded: true })],
  ['ALB multi-value query not lists', 'alb-multi-value', edit('alb-multi-value', { multiValueQueryStringParameters: { myKey: 'val1' } })],
];

describe('buffered handler', () => {
  it.each(UNKNOWN)('%s: 400 malformed_request, fields every integration accepts', async (_, event) => {
    const result = await handler(event, testContext());
    expect(Object.keys(result).sort()).toEqual(['body', 'headers', 'isBase64Encoded', 'statusCode']);
    const body = await expectEnvelope(responseOf('http-api-v2', result), 400, 'malformed_request');
    expect(body.error.message).toMatch(/not an HTTP request/);
  });

  it.each(BROKEN)("%s: 400 malformed_request in that integration's shape", async (_, kind, event) => {
    const result = await handler(event, testContext());
    // responseOf refuses fields the integration would not accept.
    const body = await expectEnvelope(responseOf(kind, result), 400, 'malformed_request');
    expect(body.error.message.length).toBeGreaterThan(10);
    if (kind === 'alb' || kind === 'alb-multi-value') expect((result as { statusDescription?: string }).statusDescription).toBe('400 Bad Request');
  });
});

describe('streaming handler', () => {
  it.each(UNKNOWN)('%s: a 400 prelude and the envelope as the body', async (_, event) => {
    const { response, done } = await invokeStreaming('function-url', streamHandler, event);
    await expectEnvelope(response, 400, 'malformed_request');
    await done;
  });

  it.each(BROKEN.filter(([, kind]) => kind === 'function-url' || kind === 'rest-api-v1'))('%s: a 400 prelude', async (_, kind, event) => {
    const { response, prelude, done } = await invokeStreaming(kind, streamHandler, event);
    expect(prelude.statusCode).toBe(400);
    await expectEnvelope(response, 400, 'malformed_request');
    await done;
  });

  it('headersOf accepts the prelude of each kind only with its own fields', () => {
    expect(() => headersOf('rest-api-v1', { statusCode: 200, cookies: ['a=1'], body: '', isBase64Encoded: false })).toThrow(/does not accept/);
  });
});
