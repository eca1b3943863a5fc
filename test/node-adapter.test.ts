// The Node adapter against real servers on random ports and real clients:
// streaming both ways with backpressure, disconnects, headers, errors, WebSockets.
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createNodeHandler, type RunningServer, type ServeOptions, serve } from '../adapters/node/index.ts';
import type { Service, WsPeer } from '../core/types.ts';
import { deferred, fakeService, recordingLogger, sleep } from './helpers/fake-service.ts';

const MiB = 1024 * 1024;
const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function start(service: Service, opts: ServeOptions = {}): Promise<RunningServer> {
  const server = await serve(service, { port: 0, logger: recordingLogger(), ...opts });
  running.push(server);
  return server;
}

async function readAll(body: ReadableStream<Uint8Array>, onChunk: (chunk: Uint8Array) => void = () => {}): Promise<void> {
  const reader = body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) onChunk(r.value);
}

/** A node:http request whose response is handed over as soon as its head arrives. */
function rawRequest(url: string, options: Parameters<typeof httpRequest>[1] = {}) {
  const req = httpRequest(url, { agent: false, ...options });
  req.on('error', () => {});
  const response = new Promise<IncomingMessage>((resolve) => req.once('response', resolve));
  return { req, response };
}

describe('request conversion', () => {
  it('streams a large upload through in many socket-sized chunks, never concatenated', async () => {
    const seen = { chunks: 0, bytes: 0, largest: 0 };
    const { url } = await start(
      fakeService(async (req) => {
        await readAll(req.body!, (chunk) => {
          seen.chunks += 1;
          seen.bytes += chunk.byteLength;
          seen.largest = Math.max(seen.largest, chunk.byteLength);
        });
        return Response.json(seen);
      }),
    );
    const piece = new Uint8Array(MiB).fill(7);
    async function* body() {
      for (let i = 0; i < 48; i++) yield piece;
    }
    const res = await request(`${url}/upload`, { method: 'POST', body: Readable.from(body()), headers: { 'content-length': String(48 * MiB) } });
    expect(res.statusCode).toBe(200);
    const result = (await res.body.json()) as typeof seen;
    expect(result.bytes).toBe(48 * MiB);
    expect(result.chunks).toBeGreaterThan(200);
    // Smaller than the pieces the client wrote: the adapter passed on socket reads as they came.
    expect(result.largest).toBeLessThan(MiB);
  });

  it('stops reading the socket while the consumer does not pull', async () => {
    const firstChunk = deferred();
    const gate = deferred();
    const { url } = await start(
      fakeService(async (req) => {
        const reader = req.body!.getReader();
        let bytes = (await reader.read()).value!.byteLength;
        firstChunk.resolve();
        await gate.promise;
        for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength;
        return Response.json({ bytes });
      }),
    );
    let sent = 0;
    const piece = new Uint8Array(MiB);
    async function* body() {
      for (let i = 0; i < 64; i++) {
        sent += piece.byteLength;
        yield piece;
      }
    }
    const pending = request(`${url}/slow`, { method: 'POST', body: Readable.from(body()), headers: { 'content-length': String(64 * MiB) } });
    await firstChunk.promise;
    await sleep(300);
    // Only socket buffers' worth may be in flight, not the 64 MiB the client has ready.
    expect(sent).toBeLessThan(24 * MiB);
    gate.resolve();
    const res = await pending;
    expect(await res.body.json()).toEqual({ bytes: 64 * MiB });
  });

  it('errors the body stream (not a short, clean end) when the client drops mid-upload', async () => {
    const reading = deferred();
    const outcome = deferred<string>();
    const { url } = await start(
      fakeService(async (req) => {
        try {
          await readAll(req.body!, () => reading.resolve());
          outcome.resolve('closed');
        } catch (err) {
          outcome.resolve(`errored: ${(err as Error).name}`);
        }
        return new Response('done');
      }),
    );
    const { req } = rawRequest(`${url}/upload`, { method: 'POST', headers: { 'content-length': String(10 * MiB) } });
    req.write(new Uint8Array(MiB));
    await reading.promise;
    req.destroy();
    expect(await outcome.promise).toBe('errored: ClientGoneError');
  });

  it('aborts request.signal when the client goes away before the response, not after it', async () => {
    const started = deferred();
    const aborted = deferred<boolean>();
    const { url } = await start(
      fakeService((req) => {
        if (req.url.endsWith('/quick')) return new Response('ok');
        started.resolve();
        return new Promise((resolve) => {
          req.signal.addEventListener('abort', () => {
            aborted.resolve(true);
            resolve(new Response('too late'));
          });
        });
      }),
    );
    const slow = rawRequest(`${url}/slow`);
    slow.req.end();
    await started.promise;
    slow.req.destroy();
    expect(await aborted.promise).toBe(true);

    let quickSignal: AbortSignal | undefined;
    const service = fakeService((req) => {
      quickSignal = req.signal;
      return new Response('ok');
    });
    const other = await start(service);
    const res = await request(`${other.url}/quick`);
    expect(await res.body.text()).toBe('ok');
    await other.close();
    expect(quickSignal?.aborted).toBe(false);
  });

  it('gives an already aborted signal when it is first read after the client left', async () => {
    const started = deferred();
    const gone = deferred();
    const signal = deferred<AbortSignal>();
    const { url } = await start(
      fakeService(async (req) => {
        started.resolve();
        await gone.promise;
        await sleep(50);
        signal.resolve(req.signal);
        return new Response('too late');
      }),
    );
    const slow = rawRequest(`${url}/slow`);
    slow.req.end();
    await started.promise;
    slow.req.destroy();
    gone.resolve();
    expect((await signal.promise).aborted).toBe(true);
  });

  it('hands the service a real Request that native APIs accept', async () => {
    const seen = deferred<{ real: boolean; copied: string; header: string | null; text: string }>();
    const { url } = await start(
      fakeService(async (req) => {
        const text = await req.clone().text();
        const copy = new Request(req, { headers: { 'x-extra': '1' } });
        seen.resolve({
          real: req instanceof Request && Object.prototype.toString.call(req) === '[object Request]',
          copied: copy.url,
          header: req.headers.get('x-custom'),
          text,
        });
        return new Response('ok');
      }),
    );
    await (await request(`${url}/r?q=1`, { method: 'POST', body: 'payload', headers: { 'x-custom': 'yes' } })).body.text();
    expect(await seen.promise).toEqual({ real: true, copied: `${url}/r?q=1`, header: 'yes', text: 'payload' });
  });

  it('puts every client header in the Request, where copies and the Headers API find them', async () => {
    const seen = deferred<Record<string, unknown>>();
    const { url } = await start(
      fakeService(async (req) => {
        const copy = new Request(req);
        seen.resolve({
          host: req.headers.get('host'),
          a: req.headers.get('x-a'),
          cookie: req.headers.get('cookie'),
          names: [...req.headers.keys()].filter((n) => n.startsWith('x-')),
          copied: copy.headers.get('x-a'),
          cloned: req.clone().headers.get('x-b'),
          method: req.method,
        });
        return new Response(null, { status: 204 });
      }),
    );
    await (await request(`${url}/h`, { headers: ['x-a', '1', 'x-a', '2', 'cookie', 'a=1', 'cookie', 'b=2', 'x-b', 'B'] })).body.text();
    expect(await seen.promise).toEqual({
      host: new URL(url).host,
      a: '1, 2',
      cookie: 'a=1; b=2',
      names: ['x-a', 'x-b'],
      copied: '1, 2',
      cloned: 'B',
      method: 'GET',
    });
  });

  it('gives GET and HEAD no body, and builds the URL from Host or, when trusted, X-Forwarded-*', async () => {
    const seen: { method: string; url: string; body: boolean }[] = [];
    const service = fakeService((req) => {
      seen.push({ method: req.method, url: req.url, body: req.body !== null });
      return new Response(null, { status: 204 });
    });
    const plain = await start(service);
    const proxied = await start(service, { trustProxy: true });
    const forwarded = { 'x-forwarded-host': 'graphrun.example', 'x-forwarded-proto': 'https' };
    await (await request(`${plain.url}/a?x=1`, { headers: forwarded })).body.text();
    await (await request(`${proxied.url}/b?y=2`, { method: 'HEAD', headers: forwarded })).body.text();
    await (await request(`${plain.url}/c`, { method: 'DELETE' })).body.text();
    await (await request(`${plain.url}/d`, { method: 'PUT', body: 'x' })).body.text();
    expect(seen).toEqual([
      { method: 'GET', url: `${plain.url}/a?x=1`, body: false },
      { method: 'HEAD', url: 'https://graphrun.example/b?y=2', body: false },
      { method: 'DELETE', url: `${plain.url}/c`, body: false },
      { method: 'PUT', url: `${plain.url}/d`, body: true },
    ]);
  });

  it('answers 400 to a Host header that is not a host', async () => {
    const { url } = await start(fakeService(() => new Response('unreachable')));
    const { req, response } = rawRequest(`${url}/x`, { headers: { host: 'user@evil.example' } });
    req.end();
    const res = await response;
    expect(res.statusCode).toBe(400);
    const text = await new Response(res as unknown as ReadableStream).text();
    expect(JSON.parse(text).error.code).toBe('malformed_request');
  });

  it('answers 400 to a request target that is not a URL', async () => {
    let called = false;
    const { url } = await start(fakeService(() => ((called = true), new Response('unreachable'))));
    const { port } = new URL(url);
    const { connect } = await import('node:net');
    const socket = connect(Number(port), '127.0.0.1');
    socket.write('GET http://[not-an-address/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    let raw = '';
    for await (const chunk of socket) raw += chunk;
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('malformed_request');
    expect(called).toBe(false);
  });

  it('refuses a Content-Length over maxBodyBytes with 413 before asking the service', async () => {
    let called = false;
    const server = createServer(
      createNodeHandler(
        fakeService(() => ((called = true), new Response('no'))),
        { maxBodyBytes: 1000 },
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { req, response } = rawRequest(`http://127.0.0.1:${port}/up`, { method: 'POST', headers: { 'content-length': '5000' } });
      req.write(new Uint8Array(100));
      const res = await response;
      expect(res.statusCode).toBe(413);
      expect(res.headers.connection).toBe('close');
      expect(called).toBe(false);
      req.destroy();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('response writing', () => {
  it('pulls the response body only as fast as the client reads, and cancels it when the client leaves', async () => {
    let pulled = 0;
    const cancelled = deferred();
    const chunk = new Uint8Array(64 * 1024);
    const { url } = await start(
      fakeService(
        () =>
          new Response(
            new ReadableStream(
              {
                pull(controller) {
                  // Bounded, so a writer that ignores backpressure fails the test instead of the heap.
                  if (pulled >= 256 * MiB) return controller.close();
                  pulled += chunk.byteLength;
                  controller.enqueue(chunk);
                },
                cancel: () => cancelled.resolve(),
              },
              { highWaterMark: 0 },
            ),
          ),
      ),
    );
    const { req, response } = rawRequest(`${url}/endless`);
    req.end();
    const res = await response;
    res.pause();
    await sleep(300);
    const stalled = pulled;
    await sleep(200);
    // An endless body against a client that reads nothing: the writer must wait on 'drain'.
    expect(stalled).toBeLessThan(32 * MiB);
    expect(pulled - stalled).toBeLessThan(MiB);
    res.destroy();
    await cancelled.promise;
  });

  it('keeps every Set-Cookie header and the status text', async () => {
    const { url } = await start(
      fakeService(() => {
        const headers = new Headers({ 'x-one': '1' });
        headers.append('set-cookie', 'a=1; Path=/');
        headers.append('set-cookie', 'b=2; HttpOnly');
        return new Response('ok', { status: 201, statusText: 'Made It', headers });
      }),
    );
    const { req, response } = rawRequest(`${url}/c`);
    req.end();
    const res = await response;
    res.resume();
    expect(res.statusCode).toBe(201);
    expect(res.statusMessage).toBe('Made It');
    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
    expect(res.headers['x-one']).toBe('1');
  });

  it('sends headers but no body to HEAD', async () => {
    const { url } = await start(fakeService(() => new Response('hello world', { headers: { 'content-length': '11', 'x-kind': 'text' } })));
    const res = await request(`${url}/h`, { method: 'HEAD' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe('11');
    expect(res.headers['x-kind']).toBe('text');
    expect(await res.body.text()).toBe('');
  });

  it('writes a body the core already knows in one piece with its length, without reading the stream', async () => {
    const responses: Response[] = [];
    const { url } = await start(
      fakeService((_req, opts) => {
        // The adapter's own JSON builder (FetchOptions.jsonResponse): no stream is built at all.
        expect(opts?.jsonResponse).toBeTypeOf('function');
        const res = opts!.jsonResponse!({ greeting: 'héllo', n: 1 }, { status: 201, headers: { 'x-kind': 'known' } });
        responses.push(res);
        return res;
      }),
    );
    const deferred = await request(`${url}/deferred`);
    expect(deferred.headers['content-length']).toBe(String(Buffer.byteLength('{"greeting":"héllo","n":1}')));
    expect(await deferred.body.text()).toBe('{"greeting":"héllo","n":1}');
    expect(Object.getPrototypeOf(responses.shift()) === Response.prototype).toBe(false);
    const res = await request(`${url}/known`);
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-kind']).toBe('known');
    expect(res.headers['transfer-encoding']).toBeUndefined();
    const text = await res.body.text();
    expect(text).toBe('{"greeting":"héllo","n":1}');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
    expect(responses[0].bodyUsed).toBe(false);
    expect(responses[0].body?.locked).toBe(false);
    // HEAD: the same length, no body.
    const head = await request(`${url}/known`, { method: 'HEAD' });
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(text)));
    expect(await head.body.text()).toBe('');
  });

  it('keeps every Set-Cookie, the status text and headers set before it on a known body', async () => {
    const handler = createNodeHandler(
      fakeService((_req, opts) => {
        const headers = new Headers({ 'x-one': '1', 'content-length': '999' });
        headers.append('set-cookie', 'a=1; Path=/');
        headers.append('set-cookie', 'b=2; HttpOnly');
        return opts!.jsonResponse!({ ok: true }, { status: 201, statusText: 'Made It', headers });
      }),
      { logger: recordingLogger() },
    );
    // A framework may have set a header already (the slow path of writeHead).
    const server = createServer((req, res) => {
      if (req.url === '/pre') res.setHeader('x-pre', 'yes');
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      for (const path of ['/plain', '/pre']) {
        const { req, response } = rawRequest(`http://127.0.0.1:${port}${path}`);
        req.end();
        const res = await response;
        const text = await new Response(res as unknown as ReadableStream).text();
        expect(res.statusCode).toBe(201);
        expect(res.statusMessage).toBe('Made It');
        expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
        expect(res.headers['x-one']).toBe('1');
        expect(res.headers['x-pre']).toBe(path === '/pre' ? 'yes' : undefined);
        expect(res.headers['content-length']).toBe(String(text.length));
        expect(text).toBe('{"ok":true}');
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('closes the connection after answering early without reading the upload', async () => {
    const { url } = await start(fakeService(() => Response.json({ error: { code: 'payload_too_large' } }, { status: 413 })));
    const { req, response } = rawRequest(`${url}/up`, { method: 'POST', headers: { 'content-length': String(50 * MiB) } });
    req.write(new Uint8Array(MiB));
    const res = await response;
    expect(res.statusCode).toBe(413);
    expect(res.headers.connection).toBe('close');
    req.destroy();
  });

  it('after answering early, reads the rest of a small upload off the wire before closing: the client can finish sending, then sees a clean end', async () => {
    const { url } = await start(fakeService(() => Response.json({ error: { code: 'unauthorized' } }, { status: 401 })));
    const { connect } = await import('node:net');
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let raw = '';
    const answered = deferred();
    socket.setEncoding('latin1').on('data', (s: string) => {
      raw += s;
      if (raw.includes('{"error":{"code":"unauthorized"}}')) answered.resolve();
    });
    const ended = new Promise<string>((resolve) => {
      socket.once('end', () => resolve('end'));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    socket.write(`POST /up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${MiB}\r\n\r\n`);
    socket.write(new Uint8Array(1000));
    await answered.promise;
    expect(raw).toMatch(/^HTTP\/1\.1 401 /);
    expect(raw.toLowerCase()).toContain('connection: close');
    // The rest of the declared body, sent after the whole answer arrived: taken, not reset.
    await new Promise<void>((resolve, reject) => socket.write(new Uint8Array(MiB - 1000), (err) => (err ? reject(err) : resolve())));
    expect(await ended).toBe('end');
    socket.destroy();
  });

  it('turns a thrown error into a generic 500 envelope and logs the detail', async () => {
    const logger = recordingLogger();
    const { url } = await start(
      fakeService(() => {
        throw new Error('database password is hunter2');
      }),
      { logger },
    );
    const res = await request(`${url}/boom`);
    expect(res.statusCode).toBe(500);
    const text = await res.body.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'upstream_error', message: expect.any(String) } });
    expect(text).not.toContain('hunter2');
    expect(JSON.stringify(logger.lines)).toContain('hunter2');
  });

  it('breaks the connection when the body fails after the head was sent', async () => {
    let step = 0;
    const { url } = await start(
      fakeService(
        () =>
          new Response(
            new ReadableStream({
              async pull(controller) {
                if (step++ === 0) return controller.enqueue(new TextEncoder().encode('partial'));
                await sleep(20);
                controller.error(new Error('disk gone'));
              },
            }),
          ),
      ),
    );
    const res = await request(`${url}/truncated`);
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow();
  });
});

describe('websocket', () => {
  const wsUrl = (url: string, path: string) => url.replace(/^http/, 'ws') + path;

  it('writes the Response of a refused upgrade and closes the socket', async () => {
    const { url } = await start(
      fakeService(() => new Response(), {
        upgrade: async () => Response.json({ error: { code: 'unauthorized', message: 'no' } }, { status: 401 }),
      }),
    );
    const ws = new WebSocket(wsUrl(url, '/ws'));
    const refusal = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (s: string) => (body += s))
          .on('end', () => resolve({ status: res.statusCode, body }));
      });
    });
    expect(refusal.status).toBe(401);
    expect(JSON.parse(refusal.body).error.code).toBe('unauthorized');
  });

  it('accepts, then bridges open, text and binary messages, and close to the hooks', async () => {
    const peers: WsPeer[] = [];
    const received: (string | Uint8Array)[] = [];
    const closed = deferred<{ code: number; reason: string }>();
    const { url } = await start(
      fakeService(() => new Response(), {
        upgrade: async () => ({ accept: true, context: { account: 'a1' } }),
        open: (peer) => {
          peers.push(peer);
          peer.send('welcome');
        },
        message: (peer, data) => {
          received.push(data);
          peer.send(data);
        },
        close: (_peer, code, reason) => closed.resolve({ code, reason }),
      }),
    );
    const ws = new WebSocket(wsUrl(url, '/ws?clientId=abc'));
    const incoming: { data: string; binary: boolean }[] = [];
    const three = deferred();
    ws.on('message', (data, isBinary) => {
      incoming.push({ data: isBinary ? [...(data as Buffer)].join(',') : String(data), binary: isBinary });
      if (incoming.length === 3) three.resolve();
    });
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send('ping');
    ws.send(new Uint8Array([1, 2, 3]));
    await three.promise;
    expect(incoming).toEqual([
      { data: 'welcome', binary: false },
      { data: 'ping', binary: false },
      { data: '1,2,3', binary: true },
    ]);
    expect(received[0]).toBe('ping');
    expect(received[1]).toBeInstanceOf(Uint8Array);
    expect([...(received[1] as Uint8Array)]).toEqual([1, 2, 3]);
    expect(peers[0].id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new URL(peers[0].request.url).searchParams.get('clientId')).toBe('abc');
    expect((peers[0] as WsPeer & { context: unknown }).context).toEqual({ account: 'a1' });
    ws.close(4000, 'bye');
    expect(await closed.promise).toEqual({ code: 4000, reason: 'bye' });
  });

  it('close() says goodbye to WebSocket peers and drops kept-alive HTTP connections', async () => {
    const server = await serve(
      fakeService(() => new Response('ok'), { upgrade: async () => ({ accept: true }) }),
      { port: 0 },
    );
    const ws = new WebSocket(wsUrl(server.url, '/ws'));
    await new Promise((resolve) => ws.once('open', resolve));
    const wsClosed = new Promise<number>((resolve) => ws.once('close', resolve));
    const res = await request(`${server.url}/keep`);
    await res.body.text();
    await server.close();
    expect(await wsClosed).toBe(1001);
    expect(server.server.listening).toBe(false);
  });
});
