// The Express adapter's edges: bodies a parser already read (rebuilt bytes,
// inflated gzip, a parser that kept nothing), where links point (nested
// mounts, the root, Express's 'trust proxy', publicBaseUrl), and the
// answers under the exact mount path.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express, { type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { graphrun } from '../adapters/express/index.ts';
import { parsedBodyBytes } from '../adapters/express/parsed-body.ts';
import { expectEnvelope, expectReferenceNotFound } from './helpers/assets.ts';
import { type ExpressApp, startExpressApp } from './helpers/express-app.ts';
import { recordingLogger } from './helpers/fake-service.ts';
import { uploadForm } from './helpers/harness.ts';
import { saveImageWorkflow } from './helpers/jobs.ts';

const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

describe('parsedBodyBytes', () => {
  it('gives a Buffer back as it is, a string in UTF-8, an object as JSON', () => {
    const buf = Buffer.from([0, 1, 2, 255]);
    expect(parsedBodyBytes(buf, 'application/octet-stream')).toBe(buf);
    expect([...parsedBodyBytes('é€', 'text/plain')!]).toEqual([...Buffer.from('é€', 'utf8')]);
    expect(text(parsedBodyBytes({ workflow: { a: [1, 'x'] } }, 'application/json'))).toBe('{"workflow":{"a":[1,"x"]}}');
    expect(text(parsedBodyBytes([1, null], 'application/vnd.api+json'))).toBe('[1,null]');
    expect(parsedBodyBytes(undefined, 'application/json')).toBeUndefined();
  });

  it('gives a parsed form back as a form: lists as repeated names, nested objects as a[b]', () => {
    const form = 'application/x-www-form-urlencoded; charset=utf-8';
    expect(text(parsedBodyBytes({ a: '1', b: ['x', 'y z'], c: '&=' }, form))).toBe('a=1&b=x&b=y+z&c=%26%3D');
    expect(text(parsedBodyBytes({ user: { name: 'n', tags: ['t1', 't2'] } }, form))).toBe('user%5Bname%5D=n&user%5Btags%5D=t1&user%5Btags%5D=t2');
    expect(text(parsedBodyBytes({}, form))).toBe('');
  });
});

describe('express adapter edges', () => {
  let app: ExpressApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('a form post reaches the service as it would without express.urlencoded() in front', async () => {
    const post = (a: ExpressApp) =>
      fetch(`${a.base}/api/v2/assets`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'file_path=a&x=1' });
    app = await startExpressApp({ before: [express.urlencoded({ extended: true })] });
    const parsed = await post(app);
    const parsedBody = await expectEnvelope(parsed, 415, 'unsupported_media_type');
    await app.close();
    app = await startExpressApp();
    const plain = await post(app);
    expect(await expectEnvelope(plain, 415, 'unsupported_media_type')).toEqual(parsedBody);
  });

  it('a gzip-encoded JSON body that express.json() inflated is submitted as plain JSON', async () => {
    app = await startExpressApp({ before: [express.json()] });
    const res = await fetch(`${app.base}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ workflow: saveImageWorkflow() })),
    });
    const job: any = await res.json();
    expect({ status: res.status, body: job }).toMatchObject({ status: 201, body: { status: expect.any(String) } });
    expect(job.urls.self).toBe(`/graph/api/v2/jobs/${job.id}`);
  });

  it('a body some middleware read without keeping it: a 500 in the envelope and a logged reason, never a hang', async () => {
    const logger = recordingLogger();
    const swallow: RequestHandler = (req, _res, next) => {
      req.on('end', () => next()).resume();
    };
    app = await startExpressApp({ before: [swallow], logger });
    const res = await fetch(`${app.base}/api/v2/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"workflow":{}}' });
    const body = await expectEnvelope(res, 500, 'upstream_error');
    expect(body.error.message).not.toMatch(/req\.body|middleware/);
    expect(logger.lines.some((l) => l.level === 'error' && /read before graphrun/.test(l.message))).toBe(true);
    // Requests without a body are unaffected.
    await expectEnvelope(await fetch(`${app.base}/api/v2/jobs/${crypto.randomUUID()}`), 404, 'not_found');
  });

  it('links follow X-Forwarded-* when Express trusts the proxy, and only then', async () => {
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example' };
    const upload = async (a: ExpressApp) => {
      const res = await fetch(`${a.base}/api/v2/assets`, { method: 'POST', headers: forwarded, body: uploadForm('x') });
      expect(res.status).toBe(201);
      return ((await res.json()) as any).url as string;
    };
    app = await startExpressApp({ configure: (a) => a.set('trust proxy', true) });
    expect(await upload(app)).toMatch(/^https:\/\/public\.example\/graph\/api\/v2\/assets\//);
    await app.close();
    app = await startExpressApp();
    expect((await upload(app)).startsWith(`${app.base}/api/v2/assets/`)).toBe(true);
    await app.close();
    // The adapter's own option wins over the app's setting.
    app = await startExpressApp({ configure: (a) => a.set('trust proxy', true), adapter: { trustProxy: false } });
    expect((await upload(app)).startsWith(`${app.base}/api/v2/assets/`)).toBe(true);
  });

  it('publicBaseUrl, when set, is the whole link base whatever the mount', async () => {
    app = await startExpressApp({ service: { publicBaseUrl: 'https://cdn.example/svc/' } });
    const res = await fetch(`${app.base}/api/v2/assets`, { method: 'POST', body: uploadForm('y') });
    expect(((await res.json()) as any).url).toMatch(/^https:\/\/cdn\.example\/svc\/api\/v2\/assets\//);
  });

  it('answers the bare mount path and a trailing slash with the dashboard, an unknown path as the reference does, HEAD without a body', async () => {
    app = await startExpressApp();
    for (const url of [app.base, `${app.base}/?x=1`]) {
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('dashboard/app.js');
    }
    await expectReferenceNotFound(await fetch(`${app.base}/nowhere`));
    const head = await fetch(`${app.base}/api/v2/nothing`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect(await head.text()).toBe('');
  });
});

describe('express adapter mounts', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  async function listen(app: express.Express): Promise<string> {
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    closers.push(() => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return stopped;
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('under a router under a path, links carry the whole prefix; at the root, none', async () => {
    const graph = await startExpressApp();
    const nested = express();
    const router = express.Router();
    router.use('/graph', graphrun(graph.service));
    nested.use('/tenant/acme', router);
    const rootApp = express();
    rootApp.use(graphrun(graph.service));

    const origins = [await listen(nested), await listen(rootApp)];
    // Closed last: after the servers that share its service.
    closers.push(() => graph.close());
    for (const [origin, prefix] of [
      [origins[0]!, '/tenant/acme/graph'],
      [origins[1]!, ''],
    ] as const) {
      const res = await fetch(`${origin}${prefix}/api/v2/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: saveImageWorkflow() }),
      });
      const job: any = await res.json();
      expect(res.status).toBe(201);
      expect(job.urls.self).toBe(`${prefix}/api/v2/jobs/${job.id}`);
      expect(res.headers.get('location')).toBe(`${prefix}/api/v2/jobs/${job.id}`);
    }
  });
});
