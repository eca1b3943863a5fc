// The shared outbound guard against a real local HTTP server. Names under
// `.test` stand for public hosts: a resolver says what they resolve to, and
// the transport connects them to the local server, so a redirect from a
// "public" host into the private network can be tried for real.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveHostWithDns } from '../adapters/node/resolve-host.ts';
import { forbiddenAddressReason } from '../lib/net/address-rules.ts';
import { checkOutboundUrl, downloadBytes, type OutboundRequest, OutboundUrlError, parseOutboundUrl, postJson } from '../lib/net/url-guard.ts';

let server: Server;
let port = 0;
const hits: string[] = [];
const posts: Array<{ path: string; body: string; type: string | undefined }> = [];
const BYTES = new TextEncoder().encode('image bytes');

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (path === '/post-307') return void res.writeHead(307, { location: '/sink' }).end();
        if (path === '/post-302') return void res.writeHead(302, { location: '/sink' }).end();
        posts.push({ path, body, type: req.headers['content-type'] });
        res.writeHead(path === '/sink' ? 204 : 500).end();
      });
      return;
    }
    if (path === '/img') res.writeHead(200, { 'content-type': 'image/png' }).end(BYTES);
    else if (path === '/to-loopback') res.writeHead(302, { location: `http://127.0.0.1:${port}/img` }).end();
    else if (path === '/to-internal-name') res.writeHead(301, { location: `http://intranet.test:${port}/img` }).end();
    else if (path === '/to-public-name') res.writeHead(303, { location: `http://cdn.test:${port}/img` }).end();
    else if (path === '/big') {
      res.writeHead(200); // chunked: no length to refuse up front
      for (let i = 0; i < 16; i++) res.write(new Uint8Array(64 * 1024));
      res.end();
    } else if (path === '/big-declared') res.writeHead(200, { 'content-length': '5000' }).end(new Uint8Array(5000));
    else if (path === '/slow-body') {
      res.writeHead(200, { 'content-length': '10' });
      res.write('12345'); // the rest never comes
    } else if (path === '/hang') {
      /* never answers */
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const PUBLIC = '93.184.216.34';
/** What the `.test` names resolve to. */
const DNS: Record<string, string[]> = {
  'images.test': [PUBLIC],
  'cdn.test': [PUBLIC, '2606:4700::1111'],
  'intranet.test': ['10.1.2.3'],
  'sneaky.test': [PUBLIC, '::1'],
};
const resolveHost = async (name: string) => {
  const found = DNS[name];
  if (!found) throw new Error(`ENOTFOUND ${name}`);
  return found;
};
/** Connects `.test` names to the local server, as the real network would connect the public address. */
const transport: typeof fetch = (input, init) => {
  const url = new URL(String(input));
  if (url.hostname.endsWith('.test')) url.hostname = '127.0.0.1';
  return fetch(url, init);
};
const policy = (extra: Partial<OutboundRequest> = {}): OutboundRequest => ({ resolveHost, fetch: transport, ...extra });
const at = (host: string, path: string) => new URL(`http://${host}:${port}${path}`);

async function failure(promise: Promise<unknown>): Promise<OutboundUrlError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundUrlError);
  return err as OutboundUrlError;
}

describe('outbound URL guard', () => {
  it('fetches from a public host, following a redirect to another public host', async () => {
    const got = await downloadBytes(at('images.test', '/to-public-name'), policy());
    expect(new TextDecoder().decode(got.bytes)).toBe('image bytes');
    expect(got.url.hostname).toBe('cdn.test');
    expect(got.content_type).toBe('image/png');
  });

  it('refuses a redirect to a loopback address, before any request reaches it', async () => {
    hits.length = 0;
    const err = await failure(downloadBytes(at('images.test', '/to-loopback'), policy()));
    expect(err.kind).toBe('refused');
    expect(err.message).toBe(`refusing to fetch 127.0.0.1:${port}: it is a loopback address`);
    expect(hits).toEqual(['/to-loopback']);
  });

  it('refuses a redirect to a name that resolves into the private network', async () => {
    hits.length = 0;
    const err = await failure(downloadBytes(at('images.test', '/to-internal-name'), policy()));
    expect(err).toMatchObject({ kind: 'refused', message: `refusing to fetch intranet.test:${port}: it resolves to 10.1.2.3, a private address` });
    expect(hits).toEqual(['/to-internal-name']);
  });

  it('refuses a name when any of its addresses is private, and a name that does not resolve', async () => {
    hits.length = 0;
    const err = await failure(downloadBytes(at('sneaky.test', '/img'), policy()));
    expect(err.message).toMatch(/it resolves to ::1, a loopback address/);
    expect((await failure(downloadBytes(at('nowhere.test', '/img'), policy()))).kind).toBe('network');
    expect(hits).toEqual([]);
  });

  it('with the switch on, follows the same redirects into the private network', async () => {
    for (const path of ['/to-loopback', '/to-internal-name']) {
      const got = await downloadBytes(at('images.test', path), policy({ allowPrivate: true }));
      expect(new TextDecoder().decode(got.bytes)).toBe('image bytes');
    }
    const direct = await downloadBytes(at('127.0.0.1', '/img'), { allowPrivate: true });
    expect(direct.bytes.length).toBe(BYTES.length);
  });

  it('refuses other schemes and unparseable URLs even with the switch on', async () => {
    expect(() => parseOutboundUrl('ftp://example.com/x')).toThrow(/only http and https/);
    expect(() => parseOutboundUrl('file:///etc/passwd')).toThrow(/only http and https/);
    expect(() => parseOutboundUrl('not a url')).toThrow(/not a valid URL/);
    await expect(checkOutboundUrl(new URL('data:text/plain,hi'), { allowPrivate: true })).rejects.toThrow(/only http and https/);
  });

  it('caps redirects', async () => {
    const loop: typeof fetch = async () => new Response(null, { status: 307, headers: { location: '/again' } });
    const err = await failure(downloadBytes(new URL('https://images.test/a'), { resolveHost, fetch: loop, maxRedirects: 3 }));
    expect(err).toMatchObject({ kind: 'redirects', message: 'more than 3 redirects' });
  });

  it('enforces the size limit while streaming and from Content-Length', async () => {
    const streamed = await failure(downloadBytes(at('127.0.0.1', '/big'), { allowPrivate: true, maxBytes: 100_000 }));
    expect(streamed).toMatchObject({ kind: 'too_large' });
    expect(streamed.message).toMatch(/larger than the 100000-byte limit/);
    const declared = await failure(downloadBytes(at('127.0.0.1', '/big-declared'), { allowPrivate: true, maxBytes: 1000 }));
    expect(declared.message).toMatch(/larger than the 1000-byte limit \(5000 bytes or more\)/);
  });

  it('enforces the time limit on the answer and on the body', async () => {
    for (const path of ['/hang', '/slow-body']) {
      const started = Date.now();
      const err = await failure(downloadBytes(at('127.0.0.1', path), { allowPrivate: true, timeoutMs: 200 }));
      expect(err).toMatchObject({ kind: 'timeout' });
      expect(err.message).toMatch(/longer than 200 ms/);
      expect(Date.now() - started).toBeLessThan(5000);
    }
  });

  it('lets the caller cancel through as its own reason', async () => {
    const controller = new AbortController();
    const reason = new DOMException('stop', 'AbortError');
    setTimeout(() => controller.abort(reason), 50);
    await expect(downloadBytes(at('127.0.0.1', '/hang'), { allowPrivate: true, signal: controller.signal })).rejects.toBe(reason);
  });

  it('reports an HTTP error status', async () => {
    expect(await failure(downloadBytes(at('127.0.0.1', '/missing'), { allowPrivate: true }))).toMatchObject({ kind: 'status', status: 404 });
  });

  it('POSTs JSON through the guard: 307/308 keep the body, other redirects are answered as they are', async () => {
    posts.length = 0;
    expect(await postJson(at('127.0.0.1', '/post-307'), '{"a":1}', { allowPrivate: true })).toEqual({ status: 204 });
    expect(posts).toEqual([{ path: '/sink', body: '{"a":1}', type: 'application/json' }]);
    expect(await postJson(at('127.0.0.1', '/post-302'), '{"a":2}', { allowPrivate: true })).toEqual({ status: 302 });
    expect(posts).toHaveLength(1);
    const refused = await failure(postJson(at('127.0.0.1', '/sink'), '{}', {}));
    expect(refused.kind).toBe('refused');
    expect(posts).toHaveLength(1);
  });

  it('the Node resolver returns every address of a name', async () => {
    const addresses = await resolveHostWithDns('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((a) => forbiddenAddressReason(a) === 'a loopback address')).toBe(true);
    expect(forbiddenAddressReason(PUBLIC)).toBeNull();
    expect(forbiddenAddressReason('fe80::1%eth0')).toMatch(/link-local/);
  });
});
