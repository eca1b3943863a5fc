// The streaming Lambda handler through a stand-in of the runtime's response
// streaming (helpers/lambda-runtime.ts: metadata JSON, 8 NUL bytes, then the
// body, as AWS documents): SSE job events read live until the job ends, also
// from an API-only function while a worker sharing its storage runs the job;
// binary bodies as raw bytes; empty bodies still send their head; a client
// that goes away releases its event stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaStreamHandler } from '../adapters/lambda/index.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Service, type ServiceOptions, type Storage, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { concatBytes, expectEnvelope, randomBytes, trickyPayload } from './helpers/assets.ts';
import { fakeRefuse } from './helpers/fake-service.ts';
import { type Harness, uploadForm } from './helpers/harness.ts';
import { submitOk, TERMINAL } from './helpers/jobs.ts';
import { type FixtureKind, fixture, ORIGIN } from './helpers/lambda-events.ts';
import {
  installFakeRuntime,
  invokeStreaming,
  PRELUDE_CONTENT_TYPE,
  removeFakeRuntime,
  STREAMING,
  type StreamedCall,
  type StreamHandler,
  streamingHarness,
} from './helpers/lambda-runtime.ts';
import { createTestNodes, waitWorkflow } from './helpers/local-nodes.ts';
import { eventsOf, openEvents } from './helpers/sse-client.ts';

const services: Service[] = [];
async function start(storage: Storage = createMemoryStorage(), options: Partial<ServiceOptions> = {}): Promise<Service> {
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });
  const service = await createService({ storage, engine, logger: silentLogger, sweepIntervalMs: 0, progressIntervalMs: 50, ...options });
  services.push(service);
  return service;
}

beforeAll(() => void installFakeRuntime());
afterAll(async () => {
  await Promise.all(services.map((s) => s.close()));
  removeFakeRuntime();
});

const handlerFor = (service: Service) => createLambdaStreamHandler(service, { logger: silentLogger }) as unknown as StreamHandler;

it('the handler is wrapped by awslambda.streamifyResponse', async () => {
  const handler = handlerFor(await start());
  expect((handler as unknown as Record<symbol, unknown>)[STREAMING]).toBe('response');
});

// Response streaming is offered by function URLs and by REST API integrations in STREAM mode.
describe.each(['function-url', 'rest-api-v1'] as FixtureKind[])('through %s', (kind) => {
  let service: Service;
  let h: Harness;
  const calls: StreamedCall[] = [];
  beforeAll(async () => {
    service = await start();
    h = streamingHarness(kind, handlerFor(service), service, calls);
  });

  it('SSE: events arrive while the job runs, the stream ends after the terminal status', async () => {
    const job = await submitOk(h, waitWorkflow(2, 60, 8));
    const { res, sse } = await openEvents(h, job.id);
    const call = calls.at(-1)!;
    expect(call.stream.contentType).toBe(PRELUDE_CONTENT_TYPE);
    expect(call.prelude.statusCode).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The first frame is read before the job is over: the body is streamed, not buffered.
    const first = await sse!.nextEvent(3_000);
    expect(first?.event).toBe('status');
    expect(TERMINAL).not.toContain(first!.json.status);
    const rest = eventsOf(await sse!.readToEnd(10_000));
    expect(rest.filter((e) => e.event === 'progress').length).toBeGreaterThanOrEqual(1);
    expect(rest.at(-1)).toMatchObject({ event: 'status', json: { id: job.id, status: 'succeeded' } });
    await call.done;
    expect(call.stream.writableFinished).toBe(true);
  });

  it('a binary download goes out as raw bytes, not base64', async () => {
    const bytes = concatBytes(trickyPayload(), randomBytes(200_000));
    const up = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(bytes, { content_type: 'image/png' }, 'big.png') });
    expect(up.status).toBe(201);
    const asset = (await up.json()) as any;
    expect(asset.url.startsWith(`${ORIGIN[kind]}/api/v2/assets/`)).toBe(true);
    const res = await h.fetch(asset.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    await calls.at(-1)!.done;

    // HEAD: no body, yet the prelude (status, length) goes out.
    const head = await h.fetch(`/api/v2/assets/${asset.id}/content`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(bytes.byteLength));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it("a 404 envelope, and cookies in the prelude (on the reference's 404 of a path of no route)", async () => {
    await expectEnvelope(await h.fetch('/api/v2/none'), 404, 'not_found');
    const cookies = ['a=1; Path=/', 'b=2; Expires=Wed, 21 Oct 2035 07:28:00 GMT'];
    const withCookies = createLambdaStreamHandler(
      {
        refuse: service.refuse,
        async fetch(request, options) {
          const response = await service.fetch(request, options);
          const headers = new Headers(response.headers);
          for (const c of cookies) headers.append('set-cookie', c);
          return new Response(response.body, { status: response.status, headers });
        },
      },
      { logger: silentLogger },
    ) as unknown as StreamHandler;
    const event = fixture(kind);
    const { response, prelude, done } = await invokeStreaming(kind, withCookies, event);
    expect(response.headers.getSetCookie()).toEqual(cookies);
    if (kind === 'function-url') expect(prelude.cookies).toEqual(cookies);
    else expect(prelude.multiValueHeaders['set-cookie']).toEqual(cookies);
    expect({ status: response.status, body: await response.text() }).toEqual({ status: 404, body: '404: Not Found' });
    await done;
  });
});

it('a client that goes away releases its event stream at once', async () => {
  // API-only: the job stays queued, so its event stream would stay open.
  const service = await start(createMemoryStorage(), { runJobs: false, maxEventStreams: 1 });
  const calls: StreamedCall[] = [];
  const h = streamingHarness('function-url', handlerFor(service), service, calls);
  const job = await submitOk(h, waitWorkflow(1, 10, 1));
  const one = await openEvents(h, job.id);
  const call = calls.at(-1)!;
  expect(one.res.status).toBe(200);
  expect((await one.sse!.nextEvent())?.json.status).toBe('queued');
  await expectEnvelope((await openEvents(h, job.id)).res, 429, 'too_many_streams');
  // The client disconnects: the runtime's response stream is destroyed under the handler.
  await one.sse!.cancel();
  expect(call.stream.destroyed).toBe(true);
  await call.done;
  const again = await openEvents(h, job.id);
  expect(again.res.status).toBe(200);
  await again.sse!.cancel();
});

it('API in the function, jobs in a worker sharing its storage: SSE follows the job to its end', async () => {
  const storage = createMemoryStorage();
  const api = await start(storage, { runJobs: false });
  await start(storage, { runJobs: true });
  const h = streamingHarness('function-url', handlerFor(api), api);
  const job = await submitOk(h, waitWorkflow(3, 100, 10));
  const { res, sse } = await openEvents(h, job.id);
  expect(res.status).toBe(200);
  const events = eventsOf(await sse!.readToEnd(15_000));
  expect(events[0]).toMatchObject({ event: 'status' });
  expect(events.at(-1)).toMatchObject({ event: 'status', json: { id: job.id, status: 'succeeded' } });
  // The worker's saved progress reaches a stream the function serves.
  expect(events.filter((e) => e.event === 'progress').length).toBeGreaterThanOrEqual(1);
}, 20_000);

it('NDJSON from any fetch handler streams line by line; buffered, it is one text result', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const ndjson = {
    refuse: fakeRefuse,
    async fetch() {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(encoder.encode('{"n":1}\n'));
          await held;
          c.enqueue(encoder.encode('{"n":2}\n'));
          c.close();
        },
      });
      return new Response(body, { headers: { 'content-type': 'application/x-ndjson' } });
    },
  };
  const handler = createLambdaStreamHandler(ndjson, { logger: silentLogger }) as unknown as StreamHandler;
  const { response, prelude, done } = await invokeStreaming('function-url', handler, fixture('function-url'));
  expect(prelude.headers['content-type']).toBe('application/x-ndjson');
  const reader = response.body!.getReader();
  // The first line is out while the producer still holds the second.
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('{"n":1}\n');
  release();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('{"n":2}\n');
  expect((await reader.read()).done).toBe(true);
  await done;

  const { createLambdaHandler } = await import('../adapters/lambda/index.ts');
  const buffered = await createLambdaHandler(ndjson, { logger: silentLogger })(fixture('http-api-v2'));
  expect(buffered).toMatchObject({ statusCode: 200, isBase64Encoded: false, body: '{"n":1}\n{"n":2}\n' });
});
