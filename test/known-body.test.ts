// adapters/node/known-body.ts: deferredJsonResponse is Response.json with its
// body known as text and no stream made until JavaScript reads it; the core's
// jsonResponse uses it for the requests of an adapter that gives it.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  deferredEventStreamResponse,
  deferredJsonResponse,
  deferredJsonTextResponse,
  knownBody,
  knownEventSource,
} from '../adapters/node/known-body.ts';
import { type RunningServer, serve } from '../adapters/node/server.ts';
import { jsonResponse as coreJson, eventStreamResponse, setRequestOptions } from '../core/http/request-options.ts';
import { createSseStream, SSE_HEADERS } from '../core/jobs/sse.ts';
import { fakeService, recordingLogger } from './helpers/fake-service.ts';

const jsonResponse = (value: unknown, init?: ResponseInit) => deferredJsonResponse(value, init);

describe('jsonResponse', () => {
  it('answers like Response.json: status, headers, body', async () => {
    const value = { a: 1, s: 'ünïcødé ✓', list: [null, true], nested: { x: 'y' } };
    const init = { status: 201, statusText: 'Made', headers: { 'Cache-Control': 'no-store', 'X-Two': '2' } };
    const ours = jsonResponse(value, init);
    const theirs = Response.json(value, init);
    expect(ours.status).toBe(theirs.status);
    expect(ours.statusText).toBe(theirs.statusText);
    expect([...ours.headers]).toEqual([...theirs.headers]);
    expect(await ours.text()).toBe(await theirs.text());
  });

  it('knows the serialized body, and the stream still carries the same bytes', async () => {
    const res = jsonResponse({ hello: 'wörld' });
    expect(knownBody(res)).toBe('{"hello":"wörld"}');
    expect(new TextDecoder().decode(await res.arrayBuffer())).toBe(knownBody(res));
  });

  it('keeps a content-type the caller gave, in any case', async () => {
    const res = jsonResponse({ a: 1 }, { headers: { 'Content-Type': 'application/problem+json' } });
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  it('takes headers as a record, a Headers object or pairs, like Response.json', () => {
    const inits: ResponseInit['headers'][] = [
      undefined,
      { 'X-A': '1' },
      { 'CONTENT-TYPE': 'text/plain', 'X-A': '1' },
      new Headers({ 'x-a': '1' }),
      new Headers({ 'content-type': 'text/plain' }),
      [
        ['X-A', '1'],
        ['X-A', '2'],
      ],
    ];
    for (const headers of inits) {
      expect([...jsonResponse(1, { headers }).headers]).toEqual([...Response.json(1, { headers }).headers]);
    }
    // The record given is not changed.
    const record = { 'X-A': '1' };
    jsonResponse(1, { headers: record });
    expect(record).toEqual({ 'X-A': '1' });
  });

  it('knows nothing of other responses, and refuses what has no JSON form', () => {
    expect(knownBody(Response.json({ a: 1 }))).toBeUndefined();
    expect(knownBody(new Response('x'))).toBeUndefined();
    expect(() => jsonResponse(undefined)).toThrow(TypeError);
  });
});

describe("the core's jsonResponse for a request whose adapter builds JSON itself", () => {
  const accepted = () => {
    const request = new Request('http://x/');
    setRequestOptions(request, { jsonResponse: deferredJsonResponse });
    return request;
  };

  it('is a Response like any other to JavaScript: status, headers, readers, body stream, clone', async () => {
    const value = { a: 'é', n: [1, 2] };
    const init = { status: 202, statusText: 'Later', headers: { 'X-One': '1' } };
    const res = coreJson(accepted(), value, init);
    const plain = Response.json(value, init);
    expect(res).toBeInstanceOf(Response);
    expect([res.status, res.statusText, res.ok]).toEqual([plain.status, plain.statusText, plain.ok]);
    expect([...res.headers]).toEqual([...plain.headers]);
    expect(knownBody(res)).toBe(JSON.stringify(value));
    expect(res.bodyUsed).toBe(false);
    const copy = res.clone();
    expect(knownBody(copy)).toBe(knownBody(res));
    expect(await copy.json()).toEqual(value);
    expect(new TextDecoder().decode(await new Response(res.body).arrayBuffer())).toBe(JSON.stringify(value));
    expect(res.bodyUsed).toBe(true);
    expect(() => res.clone()).toThrow(TypeError);
    await expect(res.text()).rejects.toThrow(TypeError);
    const again = coreJson(accepted(), value, init);
    expect(await again.text()).toBe(JSON.stringify(value));
    expect(
      await coreJson(accepted(), value, init)
        .blob()
        .then((b) => b.text()),
    ).toBe(JSON.stringify(value));
  });

  it('is an ordinary Response when the adapter gave no builder', async () => {
    const res = coreJson(new Request('http://x/'), { a: 1 }, {});
    expect(Object.getPrototypeOf(res) === Response.prototype).toBe(true);
    expect(await res.json()).toEqual({ a: 1 });
  });
});

describe('a known-body answer written by the Node adapter', () => {
  const running: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.close()));
  });

  /** Serves `make()`'s response to every request; the head and body a client gets. */
  async function served(make: () => Response) {
    const server = await serve(
      fakeService(() => make()),
      { port: 0, logger: recordingLogger() },
    );
    running.push(server);
    const res = await request(`${server.url}/x`);
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  }

  it('sends the headers it was given, as a Headers object would: names in any case, values trimmed', async () => {
    const got = await served(() => deferredJsonTextResponse('{"a":1}', { status: 201, headers: { 'Cache-Control': 'no-store', 'X-A': ' v ' } }));
    expect(got.status).toBe(201);
    expect(got.headers).toMatchObject({ 'cache-control': 'no-store', 'x-a': 'v', 'content-type': 'application/json', 'content-length': '7' });
    expect(got.body).toBe('{"a":1}');
  });

  it('sends what a handler set on its headers after building it', async () => {
    const got = await served(() => {
      const res = deferredJsonTextResponse('{}', { headers: { 'X-A': '1' } });
      res.headers.set('x-late', '2');
      res.headers.delete('x-a');
      return res;
    });
    expect(got.headers['x-late']).toBe('2');
    expect(got.headers['x-a']).toBeUndefined();
  });

  it('joins names that differ only in case, as Headers does', async () => {
    const got = await served(() => deferredJsonTextResponse('{}', { headers: { 'X-A': '1', 'x-a': '2' } }));
    expect(got.headers['x-a']).toBe('1, 2');
  });

  it('is a Response to JavaScript, and refuses a status the Response constructor refuses', () => {
    const res = deferredJsonTextResponse('{"a":1}', { status: 404 });
    expect(res).toBeInstanceOf(Response);
    expect([res.status, res.ok, res.type, res.url, res.redirected, res.statusText]).toEqual([404, false, 'default', '', false, '']);
    expect(Object.prototype.toString.call(res)).toBe('[object Response]');
    expect(() => deferredJsonTextResponse('{}', { status: 99 })).toThrow(RangeError);
    expect(() => new Response('{}', { status: 99 })).toThrow(RangeError);
  });
});

describe('an event stream answer (deferredEventStreamResponse)', () => {
  const running: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.close()));
  });

  it('is a Response to JavaScript whose body is the stream, and no longer a source to attach once read', async () => {
    const sse = createSseStream({ keepaliveMs: 0 });
    const res = deferredEventStreamResponse(sse, { headers: SSE_HEADERS });
    expect(res).toBeInstanceOf(Response);
    expect(res.headers.get('content-type')).toBe(SSE_HEADERS['content-type']);
    expect(knownBody(res)).toBeUndefined();
    expect(knownEventSource(res)).toBe(sse);
    sse.send({ event: 'status', data: { status: 'succeeded' } });
    sse.close();
    expect(await res.text()).toBe('event: status\ndata: {"status":"succeeded"}\n\n');
    expect(knownEventSource(res)).toBeUndefined();
  });

  it('is an ordinary Response over the Web stream when the adapter gave no builder', async () => {
    const sse = createSseStream({ keepaliveMs: 0 });
    const res = eventStreamResponse(new Request('http://x/'), sse, { headers: SSE_HEADERS });
    expect(Object.getPrototypeOf(res) === Response.prototype).toBe(true);
    expect(knownEventSource(res)).toBeUndefined();
    sse.close();
    expect(await res.text()).toBe('');
  });

  it('the Node adapter writes its frames as they come, with the head at once when none is ready, and ends with the stream', async () => {
    const sse = createSseStream({ keepaliveMs: 0 });
    let clientGone: unknown;
    const server = await serve(
      fakeService(() => deferredEventStreamResponse(sse, { headers: SSE_HEADERS })),
      { port: 0, logger: recordingLogger() },
    );
    running.push(server);
    const res = await request(`${server.url}/events`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(SSE_HEADERS['content-type']);
    const decoder = new TextDecoder();
    let text = '';
    const reading = (async () => {
      for await (const chunk of res.body) {
        text += decoder.decode(chunk, { stream: true });
        // The second frame only once the first is through: each goes out as it comes.
        if (text.includes('one') && !text.includes('two') && !sse.closed && sse.buffered === 0) sse.send({ event: 'status', data: 'two' });
      }
    })().catch((err) => (clientGone = err));
    sse.send({ event: 'status', data: 'one' });
    await new Promise<void>((resolve) => {
      const check = setInterval(() => text.includes('two') && (clearInterval(check), resolve()), 5);
    });
    sse.close();
    await reading;
    expect(clientGone).toBeUndefined();
    expect(text).toBe('event: status\ndata: "one"\n\nevent: status\ndata: "two"\n\n');
  });

  it('a client that goes away cancels the stream', async () => {
    const cancels: unknown[] = [];
    let made!: ReturnType<typeof createSseStream>;
    const server = await serve(
      fakeService(() => {
        made = createSseStream({ keepaliveMs: 0, onCancel: (r) => cancels.push(r) });
        made.send({ event: 'status', data: 'running' });
        return deferredEventStreamResponse(made, { headers: SSE_HEADERS });
      }),
      { port: 0, logger: recordingLogger() },
    );
    running.push(server);
    const ac = new AbortController();
    const res = await request(`${server.url}/events`, { signal: ac.signal });
    const first = await res.body[Symbol.asyncIterator]().next();
    expect(new TextDecoder().decode(first.value)).toBe('event: status\ndata: "running"\n\n');
    ac.abort();
    while (!made.closed) await new Promise((r) => setTimeout(r, 5));
    expect(cancels).toHaveLength(1);
    expect(made.send({ event: 'status', data: 'late' })).toBe(false);
  });
});
