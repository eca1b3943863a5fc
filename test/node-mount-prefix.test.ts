// The mount prefix as a per-request fact: `service.fetch(request,
// { mountPrefix })` in process, and the Node adapter's handler and WebSocket
// mounted under /graph in a server that serves other things too.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { attachWebSocket, createNodeHandler } from '../adapters/node/index.ts';
import { createService, type Service, silentLogger } from '../index.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import { expectEnvelope, expectReferenceNotFound } from './helpers/assets.ts';
import { uploadForm as imageForm, makePng } from './helpers/cloud-files.ts';
import { uploadForm } from './helpers/harness.ts';
import { saveImageWorkflow } from './helpers/jobs.ts';
import { connectWs, refusedUpgrade } from './helpers/ws-client.ts';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function newService(): Promise<Service> {
  const service = await createService({ storage: createMemoryStorage(), logger: silentLogger, sweepIntervalMs: 0 });
  open.push(() => service.close());
  return service;
}

const submit = (url: string) =>
  new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workflow: saveImageWorkflow() }) });

describe('service.fetch with a mount prefix', () => {
  it('puts the prefix in every link: asset url, job Location and urls, the cloud /view redirect', async () => {
    const service = await newService();
    const up = await service.fetch(new Request('http://app.test/api/v2/assets', { method: 'POST', body: uploadForm('abc') }), {
      mountPrefix: '/graph/',
    });
    const asset: any = await up.json();
    expect(up.status).toBe(201);
    expect(asset.url.startsWith(`http://app.test/graph/api/v2/assets/${asset.id}/content?`)).toBe(true);

    const created = await service.fetch(submit('http://app.test/api/v2/jobs'), { mountPrefix: '/graph' });
    const job: any = await created.json();
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/graph/api/v2/jobs/${job.id}`);
    expect(job.urls).toEqual({
      self: `/graph/api/v2/jobs/${job.id}`,
      events: `/graph/api/v2/jobs/${job.id}/events`,
      cancel: `/graph/api/v2/jobs/${job.id}/cancel`,
    });

    const png = makePng(2, 2, 3, () => [1, 2, 3]);
    const image: any = await (
      await service.fetch(new Request('http://app.test/api/upload/image', { method: 'POST', body: imageForm({ bytes: png }) }))
    ).json();
    const view = await service.fetch(new Request(`http://app.test/api/view?filename=${image.name}&type=input`), { mountPrefix: '/a/b' });
    expect(view.status).toBe(302);
    const location = new URL(view.headers.get('location')!);
    expect(location.pathname).toMatch(/^\/a\/b\/api\/v2\/assets\/[0-9a-f-]{36}\/content$/);
    // The signature holds once the adapter has taken the prefix off again.
    const content = await service.fetch(new Request(`http://app.test${location.pathname.slice('/a/b'.length)}${location.search}`));
    expect(content.status).toBe(200);
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(png);
  });

  it('is per request: the same service answers with and without one', async () => {
    const service = await newService();
    const plain: any = await (await service.fetch(submit('http://app.test/api/v2/jobs'))).json();
    expect(plain.urls.self).toBe(`/api/v2/jobs/${plain.id}`);
    const root: any = await (await service.fetch(submit('http://app.test/api/v2/jobs'), { mountPrefix: '/' })).json();
    expect(root.urls.self).toBe(`/api/v2/jobs/${root.id}`);
    // A runtime's own second argument (a server object) carries no prefix and changes nothing.
    const other: any = await (await service.fetch(submit('http://app.test/api/v2/jobs'), { port: 1 } as never)).json();
    expect(other.urls.self).toBe(`/api/v2/jobs/${other.id}`);
  });

  it('refuses a prefix that is not a path', async () => {
    const service = await newService();
    for (const bad of ['graph', '/graph?x=1', '/gr aph', '/graph#top']) {
      await expect(service.fetch(new Request('http://app.test/api/v2/jobs/x'), { mountPrefix: bad }), bad).rejects.toThrow(TypeError);
    }
  });
});

describe('Node adapter under /graph in a server of its own', () => {
  async function appServer(service: Service): Promise<{ server: Server; origin: string }> {
    const graph = createNodeHandler(service, { mountPrefix: '/graph', logger: silentLogger });
    const server = createServer((req, res) => {
      if (req.url === '/graph' || req.url?.startsWith('/graph/') || req.url?.startsWith('/graph?')) return graph(req, res);
      if (req.url === '/hello') return void res.end('hello from the app');
      res.statusCode = 404;
      res.end('app: not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push(async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await stopped;
    });
    return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it('serves the service under the prefix with links carrying it, and leaves the rest to the app', async () => {
    const { origin } = await appServer(await newService());
    const res = await fetch(`${origin}/graph/api/v2/assets`, { method: 'POST', body: uploadForm('node mount') });
    const asset: any = await res.json();
    expect(res.status).toBe(201);
    expect(asset.url.startsWith(`${origin}/graph/api/v2/assets/${asset.id}/content?`)).toBe(true);
    expect(await (await fetch(asset.url)).text()).toBe('node mount');
    await expectEnvelope(await fetch(`${origin}/graph/api/v2/nothing`), 404, 'not_found');
    await expectReferenceNotFound(await fetch(`${origin}/graph/nowhere`));
    // The prefix itself is the dashboard, resolving its files under the prefix even without the slash.
    expect(await (await fetch(`${origin}/graph`)).text()).toContain('<base href="/graph/">');
    expect(await (await fetch(`${origin}/hello`)).text()).toBe('hello from the app');
    expect(await (await fetch(`${origin}/api/v2/assets/${asset.id}`)).text()).toBe('app: not here');
  });

  it('answers 404 in the envelope for a request outside its prefix', async () => {
    const service = await newService();
    const server = createServer(createNodeHandler(service, { mountPrefix: '/graph', logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const path of ['/api/v2/jobs', '/graphite/api/v2/jobs', '/Graph/api/v2/jobs']) {
      await expectEnvelope(await fetch(`${origin}${path}`, { method: 'POST', body: '{}' }), 404, 'not_found');
    }
  });

  it('refuses a prefix that is not a path when the handler is made', async () => {
    const service = await newService();
    expect(() => createNodeHandler(service, { mountPrefix: 'graph' })).toThrow(TypeError);
  });

  it("/graph/ws is the service's; upgrades elsewhere go to the app's own WebSocket server", async () => {
    const service = await newService();
    const { server, origin } = await appServer(service);
    const ws = attachWebSocket(server, service, { mountPrefix: '/graph', logger: silentLogger });
    open.push(() => ws.close());
    const chat = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      if (req.url === '/chat') chat.handleUpgrade(req, socket, head, (client) => client.send('chat says hi'));
    });
    open.push(
      () =>
        new Promise<void>((resolve) => {
          for (const client of chat.clients) client.terminate();
          chat.close(() => resolve());
        }),
    );
    const wsOrigin = origin.replace(/^http/, 'ws');

    const c = await connectWs(`${origin}/graph/ws`, { clientId: 'mounted' }, '');
    const status = await c.waitFor('status', (f) => f.kind === 'text' && f.type === 'status');
    expect(status.kind === 'text' && status.data.sid).toBe('mounted');
    await c.close();

    const other = new WebSocket(`${wsOrigin}/chat`);
    const greeting = await new Promise<string>((resolve, reject) => {
      other.once('message', (data) => resolve(String(data)));
      other.once('error', reject);
    });
    expect(greeting).toBe('chat says hi');
    other.close();

    expect((await refusedUpgrade(`${wsOrigin}/graph/nope`)).status).toBe(404);
  });
});
