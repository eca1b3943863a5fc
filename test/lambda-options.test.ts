// What the Lambda handlers do around the conversion: the path prefix a REST
// API stage or a configured base path adds (links carry it), the invocation's
// deadline closing a live stream in time, results too large to return, and a
// failing service, all answered in the envelope without a throw; music
// generation, refused by the buffered handler before anything is charged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaHandler, createLambdaStreamHandler } from '../adapters/lambda/index.ts';
import { createService, type Logger, type Service, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { expectEnvelope, randomBytes } from './helpers/assets.ts';
import { recordingCredits } from './helpers/credits.ts';
import { fakeRefuse } from './helpers/fake-service.ts';
import { uploadForm } from './helpers/harness.ts';
import { saveImageWorkflow, submitOk } from './helpers/jobs.ts';
import { callOf, eventFor, FIXTURE_KINDS, lambdaHarness, responseOf, testContext } from './helpers/lambda-events.ts';
import { installFakeRuntime, invokeStreaming, removeFakeRuntime, type StreamHandler, streamingHarness } from './helpers/lambda-runtime.ts';
import { expectMusicError, MUSIC_PATH, musicForm, readMusic } from './helpers/music.ts';
import { eventsOf, SseReader } from './helpers/sse-client.ts';

let service: Service;
beforeAll(async () => {
  // API-only: a submitted job stays queued, so its event stream stays open.
  service = await createService({ storage: createMemoryStorage(), logger: silentLogger, sweepIntervalMs: 0, runJobs: false });
});
afterAll(() => service?.close());

const workflow = JSON.stringify({ workflow: saveImageWorkflow() });

describe('path prefixes', () => {
  it('a REST API stage (requestContext.path) is the mount prefix: links carry it', async () => {
    const handler = createLambdaHandler(service, { logger: silentLogger });
    const call = await callOf(
      new Request('https://x/api/v2/jobs', { method: 'POST', body: workflow, headers: { 'content-type': 'application/json' } }),
    );
    const event = eventFor('rest-api-v1', call);
    Object.assign(event.requestContext, { stage: 'prod', path: '/prod/api/v2/jobs' });
    const res = responseOf('rest-api-v1', await handler(event, testContext()));
    expect(res.status).toBe(201);
    const job = (await res.json()) as any;
    expect(res.headers.get('location')).toBe(`/prod/api/v2/jobs/${job.id}`);
  });

  it('basePath: an HTTP API stage in rawPath is taken off and carried by links', async () => {
    const handler = createLambdaHandler(service, { logger: silentLogger, basePath: '/prod' });
    const h = lambdaHarness('http-api-v2', handler, service);
    const up = await h.fetch('/prod/api/v2/assets', { method: 'POST', body: uploadForm(randomBytes(64), { content_type: 'image/png' }, 'a.png') });
    expect(up.status).toBe(201);
    const asset = (await up.json()) as any;
    expect(asset.url.startsWith(`https://id.execute-api.us-east-1.amazonaws.com/prod/api/v2/assets/${asset.id}/content?`)).toBe(true);
    const content = await h.fetch(asset.url);
    expect(content.status).toBe(200);
    // Paths outside the base path reach the service unchanged (and find nothing).
    await expectEnvelope(await h.fetch('/api/v2/assets/x'), 404, 'not_found');
  });
});

describe('deadlines', () => {
  it('buffered: an event stream is closed before the invocation ends and returned with what it sent', async () => {
    const handler = createLambdaHandler(service, { logger: silentLogger, deadlineMarginMs: 1000 });
    const h = lambdaHarness('http-api-v2', handler, service);
    const job = await submitOk(h, saveImageWorkflow());
    const call = await callOf(new Request(`https://x/api/v2/jobs/${job.id}/events`));
    const started = Date.now();
    const result = await handler(eventFor('http-api-v2', call), testContext(1300));
    expect(Date.now() - started).toBeLessThan(1200);
    const res = responseOf('http-api-v2', result);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = eventsOf(await new SseReader(res.body!).readToEnd());
    expect(events[0]).toMatchObject({ event: 'status', json: { id: job.id, status: 'queued' } });
  });

  it('buffered: timeoutMs bounds a request below an integration timeout', async () => {
    const handler = createLambdaHandler(service, { logger: silentLogger, timeoutMs: 200 });
    const h = lambdaHarness('rest-api-v1', handler, service);
    const job = await submitOk(h, saveImageWorkflow());
    const started = Date.now();
    const res = await h.fetch(`/api/v2/jobs/${job.id}/events`);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await res.text()).toContain('event: status');
  });

  it('streaming: the stream ends cleanly before the deadline', async () => {
    installFakeRuntime();
    try {
      const handler = createLambdaStreamHandler(service, { logger: silentLogger, deadlineMarginMs: 1000 }) as unknown as StreamHandler;
      const h = lambdaHarness('function-url', createLambdaHandler(service, { logger: silentLogger }), service);
      const job = await submitOk(h, saveImageWorkflow());
      const call = await callOf(new Request(`https://x/api/v2/jobs/${job.id}/events`));
      const { response, done } = await invokeStreaming('function-url', handler, eventFor('function-url', call), testContext(1400));
      const events = eventsOf(await new SseReader(response.body!).readToEnd(3000));
      expect(events[0]).toMatchObject({ event: 'status', json: { status: 'queued' } });
      await done;
    } finally {
      removeFakeRuntime();
    }
  });
});

describe('failures', () => {
  it('a body too large for a buffered result: 500 saying so, not a runtime error', async () => {
    const handler = createLambdaHandler(service, { logger: silentLogger, maxResultBodyBytes: 1000 });
    const h = lambdaHarness('alb-multi-value', handler, service);
    const up = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(randomBytes(5000), { content_type: 'image/png' }, 'b.png') });
    const asset = (await up.json()) as any;
    const res = await h.fetch(asset.url);
    const body = await expectEnvelope(res, 500, 'upstream_error');
    expect(body.error.message).toMatch(/streaming handler/);
  });

  it('a service that throws: 500 with a generic message, the detail logged', async () => {
    const logged: string[] = [];
    const logger: Logger = { info() {}, warn() {}, error: (m, f) => void logged.push(`${m} ${JSON.stringify(f)}`) };
    const handler = createLambdaHandler({ fetch: () => Promise.reject(new Error('database on fire')), refuse: fakeRefuse }, { logger });
    const res = responseOf(
      'rest-api-v1',
      await handler(eventFor('rest-api-v1', await callOf(new Request('https://x/api/v2/jobs/1'))), testContext()),
    );
    const body = await expectEnvelope(res, 500, 'upstream_error');
    expect(JSON.stringify(body)).not.toContain('fire');
    expect(logged.join('\n')).toContain('database on fire');
  });
});

describe('music generation', () => {
  const credits = recordingCredits();
  const auth = { authorization: 'Bearer key-alice' };
  let music: Service;
  beforeAll(async () => {
    music = await createService({
      storage: createMemoryStorage(),
      logger: silentLogger,
      sweepIntervalMs: 0,
      accounts: [{ id: 'alice', apiKeys: ['key-alice'] }],
      credits: credits.provider,
    });
  });
  afterAll(() => music?.close());

  // A minute of audio is more than a buffered result can carry; charged first, it would be paid for and never received.
  it.each(FIXTURE_KINDS)('buffered (%s): 400 in the music shape, pointing to the streaming handler, nothing charged', async (kind) => {
    credits.charges.length = 0;
    const h = lambdaHarness(kind, createLambdaHandler(music, { logger: silentLogger }), music);
    const res = await h.fetch(MUSIC_PATH, { method: 'POST', body: musicForm({ prompt: 'a long piano piece', duration: '60' }), headers: auth });
    expect(await expectMusicError(res, 400, 'bad_request')).toMatch(/streamHandler/);
    expect(credits.charges).toEqual([]);
  });

  it('buffered under a base path: refused the same', async () => {
    credits.charges.length = 0;
    const h = lambdaHarness('http-api-v2', createLambdaHandler(music, { logger: silentLogger, basePath: '/prod' }), music);
    const res = await h.fetch(`/prod${MUSIC_PATH}`, { method: 'POST', body: musicForm({ prompt: 'piano', duration: '5' }), headers: auth });
    await expectMusicError(res, 400, 'bad_request');
    expect(credits.charges).toEqual([]);
  });

  it('streaming: music is generated, charged and streamed as before', async () => {
    installFakeRuntime();
    try {
      credits.charges.length = 0;
      const handler = createLambdaStreamHandler(music, { logger: silentLogger }) as unknown as StreamHandler;
      const h = streamingHarness('function-url', handler, music);
      const res = await h.fetch(MUSIC_PATH, { method: 'POST', body: musicForm({ prompt: 'piano', duration: '2' }), headers: auth });
      const out = await readMusic(res);
      expect(out.complete).toBeDefined();
      expect(credits.charges).toEqual([['alice', 1, 'music generation']]);
    } finally {
      removeFakeRuntime();
    }
  });
});
