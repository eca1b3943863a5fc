// The light Request the Node adapter hands graphrun's own services for a
// request without a body (adapters/node/bodiless-request.ts): whatever a
// handler reads of it must be what the plain conversion gives, and anything
// that needs undici's internals must still work on it. Real servers, real
// clients; a fake service marked as graphrun's own gets the light Request.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, serve } from '../adapters/node/index.ts';
import { markOwnService } from '../core/own-services.ts';
import type { Service } from '../core/types.ts';
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

  it('is not given for a request with a body, nor to a service that is not graphrun’s own', async () => {
    const seen: Array<{ method: string; light: boolean; body: string }> = [];
    const handle = async (req: Request) => {
      const clone = req.clone();
      seen.push({ method: req.method, light: isLight(req), body: await clone.text() });
      return new Response(null, { status: 204 });
    };
    const mine = await start(own(handle));
    await (await request(`${mine.url}/x`, { method: 'DELETE', body: 'gone' })).body.text();
    await (await request(`${mine.url}/x`, { method: 'POST', body: 'new' })).body.text();
    const other = await start(fakeService(handle));
    await (await request(`${other.url}/x`)).body.text();
    expect(seen).toEqual([
      { method: 'DELETE', light: false, body: 'gone' },
      { method: 'POST', light: false, body: 'new' },
      { method: 'GET', light: false, body: '' },
    ]);
  });
});
