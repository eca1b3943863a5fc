// The light Request the Node adapter hands graphrun's own services for a
// request without a body (adapters/node/light-request.ts): whatever a
// handler reads of it must be what the plain conversion gives, and anything
// that needs undici's internals must still work on it. Real servers, real
// clients; a fake service marked as graphrun's own gets the light Request.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, serve } from '../adapters/node/index.ts';
import { WHOLE_BODY_MAX_BYTES } from '../adapters/node/request-body.ts';
import { markOwnService } from '../core/own-services.ts';
import type { FetchOptions, Service } from '../core/types.ts';
import { deferred, fakeService, recordingLogger } from './helpers/fake-service.ts';

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function start(service: Service): Promise<RunningServer> {
  const server = await serve(service, { port: 0, logger: recordingLogger() });
  running.push(server);
  return server;
}

/** A service that is graphrun's own to the adapter, answering with `handle`. */
const own = (handle: (req: Request) => Promise<Response> | Response) => markOwnService(fakeService(handle));

/**
 * Whether the adapter gave the light Request: undici cannot copy that one
 * (`new Request(request)` needs its internals), which is why only services
 * known never to copy one get it.
 */
function isLight(req: Request): boolean {
  try {
    new Request(req);
    return false;
  } catch {
    return true;
  }
}

/** A raw request (any target, e.g. absolute-form) and its whole answer. */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the light Request of a request without a body', () => {
  it('is a Request whose every member reads as the plain one: body, clone, readers, the fetch fields', async () => {
    const seen = deferred<Record<string, unknown>>();
    const { url } = await start(
      own(async (req) => {
        const plain = new Request(req.url, { method: req.method, headers: req.headers });
        const fields = ['cache', 'credentials', 'destination', 'integrity', 'keepalive', 'mode', 'redirect', 'referrer', 'referrerPolicy'] as const;
        const clone = req.clone();
        seen.resolve({
          light: isLight(req),
          instance: req instanceof Request,
          tag: Object.prototype.toString.call(req),
          body: req.body,
          bodyUsed: req.bodyUsed,
          text: await req.text(),
          fields: Object.fromEntries(fields.map((f) => [f, req[f] === plain[f]])),
          clone: clone instanceof Request && clone.url === req.url && clone.headers.get('x-a') === 'A',
          copy: new Request(clone).headers.get('x-a'),
        });
        return new Response(null, { status: 204 });
      }),
    );
    await (await request(`${url}/h`, { headers: { 'x-a': 'A' } })).body.text();
    expect(await seen.promise).toEqual({
      light: true,
      instance: true,
      tag: '[object Request]',
      body: null,
      bodyUsed: false,
      text: '',
      fields: {
        cache: true,
        credentials: true,
        destination: true,
        integrity: true,
        keepalive: true,
        mode: true,
        redirect: true,
        referrer: true,
        referrerPolicy: true,
      },
      clone: true,
      copy: 'A',
    });
  });

  it('has the method, the parsed URL and every header as the plain conversion gives them', async () => {
    const seen: Array<{ method: string; url: string; a: string | null; cookie: string | null; host: string | null }> = [];
    const { url } = await start(
      own((req) => {
        seen.push({ method: req.method, url: req.url, a: req.headers.get('x-a'), cookie: req.headers.get('cookie'), host: req.headers.get('host') });
        return new Response(null, { status: 204 });
      }),
    );
    const port = Number(new URL(url).port);
    for (const method of ['GET', 'HEAD', 'DELETE', 'OPTIONS']) {
      await (
        await request(`${url}/a/../api/v2/x%41?q=a b`, {
          method: method as 'GET',
          headers: ['x-a', '1', 'x-a', '2', 'cookie', 'a=1', 'cookie', 'b=2'],
        })
      ).body.text();
    }
    expect(seen).toHaveLength(4);
    for (const [i, method] of ['GET', 'HEAD', 'DELETE', 'OPTIONS'].entries()) {
      // Dot segments resolved, the query's space escaped: the URL as `new Request` would serialize it.
      expect(seen[i]).toEqual({
        method,
        url: `http://127.0.0.1:${port}/api/v2/x%41?q=a%20b`,
        a: '1, 2',
        cookie: 'a=1; b=2',
        host: `127.0.0.1:${port}`,
      });
    }
  });

  it('aborts its signal when the client goes away before the answer, and not after a normal one', async () => {
    const started = deferred();
    const aborted = deferred<boolean>();
    let quick: AbortSignal | undefined;
    const { url } = await start(
      own((req) => {
        if (req.url.endsWith('/quick')) {
          quick = req.signal;
          return new Response('ok');
        }
        started.resolve();
        return new Promise((resolve) => {
          req.signal.addEventListener('abort', () => {
            aborted.resolve(true);
            resolve(new Response('too late'));
          });
        });
      }),
    );
    const slow = httpRequest(`${url}/slow`, { agent: false });
    slow.on('error', () => {});
    slow.end();
    await started.promise;
    slow.destroy();
    expect(await aborted.promise).toBe(true);
    expect(await (await request(`${url}/quick`)).body.text()).toBe('ok');
    expect(quick?.aborted).toBe(false);
  });

  it('refuses with 400 an absolute-form target with credentials, as the Request constructor does', async () => {
    let reached = 0;
    const { url } = await start(
      own(() => {
        reached++;
        return new Response(null, { status: 204 });
      }),
    );
    const port = Number(new URL(url).port);
    const refused = await raw(port, 'GET', `http://user:secret@127.0.0.1:${port}/api/v2/jobs`);
    expect(refused.status).toBe(400);
    // The service's refusal envelope, as for any request the adapter cannot convert.
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: expect.any(String), message: 'The request could not be read.' } });
    // The same target without them is served.
    expect((await raw(port, 'GET', `http://127.0.0.1:${port}/api/v2/jobs`)).status).toBe(204);
    expect(reached).toBe(1);
  });

  it('carries a small body whose length is given, read whole and also handed over as FetchOptions.requestBody', async () => {
    const seen: Array<{ method: string; light: boolean; body: string; whole: string | undefined }> = [];
    const service = markOwnService(
      fakeService(async (req, options) => {
        const whole = options?.requestBody === undefined ? undefined : new TextDecoder().decode(options.requestBody);
        seen.push({ method: req.method, light: isLight(req), body: await req.clone().text(), whole });
        expect(req.headers.get('content-length')).toBe(String(new TextEncoder().encode(whole ?? '').byteLength));
        return Response.json(await req.json());
      }),
    );
    const mine = await start(service);
    const body = JSON.stringify({ workflow: { a: 'ünïcødé ✓' } });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await request(`${mine.url}/x`, { method, body, headers: { 'content-type': 'application/json' } });
      expect(await res.body.json()).toEqual(JSON.parse(body));
    }
    expect(seen).toEqual(['POST', 'PUT', 'PATCH', 'DELETE'].map((method) => ({ method, light: true, body, whole: body })));
  });

  it('streams a body sent chunked, one larger than WHOLE_BODY_MAX_BYTES or encoded, and every body to a service that is not graphrun’s own', async () => {
    const seen: Array<{ light: boolean; size: number; whole: boolean }> = [];
    const handle = async (req: Request, options?: FetchOptions) => {
      const clone = req.clone();
      seen.push({ light: isLight(req), size: (await clone.arrayBuffer()).byteLength, whole: options?.requestBody !== undefined });
      return new Response(null, { status: 204 });
    };
    const mine = await start(markOwnService(fakeService(handle)));
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('abc'));
        c.close();
      },
    });
    await (await request(`${mine.url}/x`, { method: 'POST', body: Readable.fromWeb(chunked as never) })).body.text();
    await (await request(`${mine.url}/x`, { method: 'POST', body: Buffer.alloc(WHOLE_BODY_MAX_BYTES + 1, 1) })).body.text();
    await (await request(`${mine.url}/x`, { method: 'POST', body: 'xyz', headers: { 'content-encoding': 'identity' } })).body.text();
    const other = await start(fakeService(handle));
    await (await request(`${other.url}/x`, { method: 'POST', body: 'new' })).body.text();
    await (await request(`${other.url}/x`)).body.text();
    expect(seen).toEqual([
      { light: false, size: 3, whole: false },
      { light: false, size: WHOLE_BODY_MAX_BYTES + 1, whole: false },
      { light: false, size: 3, whole: false },
      { light: false, size: 3, whole: false },
      { light: false, size: 0, whole: false },
    ]);
  });

  it('a client that leaves before its small body is whole reaches no handler and breaks nothing', async () => {
    let reached = 0;
    const logger = recordingLogger();
    const server = await serve(markOwnService(fakeService(() => (reached++, new Response(null, { status: 204 })))), { port: 0, logger });
    running.push(server);
    const port = Number(new URL(server.url).port);
    const gone = deferred<void>();
    const req = httpRequest({ port, method: 'POST', path: '/x', headers: { 'content-length': '1000' } });
    req.on('error', () => gone.resolve());
    req.on('close', () => gone.resolve());
    // Handed to the socket before the client leaves: the server has the head and part of the body.
    await new Promise<void>((resolve) => req.write('only a part', () => resolve()));
    req.destroy();
    await gone.promise;
    // The server still answers, and nothing reached the handler or the error log.
    expect((await raw(port, 'GET', '/x')).status).toBe(204);
    expect(reached).toBe(1);
    expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
  });
});
