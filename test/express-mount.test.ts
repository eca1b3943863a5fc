// graphrun mounted at /graph in a real Express app with routes of its own,
// with and without body parsers in front: uploads, jobs, signed links, the
// cloud /view redirect and /ws all work under the prefix, every link carries
// it, and the app's own routes are untouched.
import express, { type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blake3Of, expectEnvelope, expectReferenceNotFound, trickyPayload, UUID } from './helpers/assets.ts';
import { uploadForm as imageForm, makePng } from './helpers/cloud-files.ts';
import { type ExpressApp, startExpressApp } from './helpers/express-app.ts';
import { uploadForm } from './helpers/harness.ts';
import { expectJobShape, PNG_SIGNATURE, saveImageWorkflow, sleep, TERMINAL } from './helpers/jobs.ts';
import { eventsOf, SseReader } from './helpers/sse-client.ts';
import { connectWs, refusedUpgrade } from './helpers/ws-client.ts';

const TOKEN = 'express-mount-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

/** Each variant: the middleware before everything, what the app's POST /echo sees of '{"a":1}', whether the app's parser reads JSON. */
const PARSERS: Array<[string, RequestHandler[], { echo: unknown }]> = [
  ['no body parser', [], { echo: null }],
  ['express.json()', [express.json()], { echo: { a: 1 } }],
  ['express.urlencoded() + express.json()', [express.urlencoded(), express.json()], { echo: { a: 1 } }],
  // Every body read into a Buffer, multipart uploads included.
  [
    'express.raw() for every type',
    [express.raw({ type: () => true, limit: '20mb' })],
    { echo: { type: 'Buffer', data: [...Buffer.from('{"a":1}')] } },
  ],
  ['express.text() for JSON', [express.text({ type: 'application/json' })], { echo: '{"a":1}' }],
];

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (status ${res.status}): ${text.slice(0, 200)}`);
  }
}

async function waitForJob(url: string): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await fetch(url, { headers: AUTH });
    expect(res.status).toBe(200);
    const job = await json(res);
    if (TERMINAL.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job still ${job.status}`);
    await sleep(20);
  }
}

describe.each(PARSERS)('express, graphrun at /graph, %s', (_label, before, { echo }) => {
  let app: ExpressApp;
  beforeAll(async () => {
    app = await startExpressApp({ before, service: { token: TOKEN } });
  });
  afterAll(() => app?.close());

  it("leaves the app's own routes to the app", async () => {
    const hello = await fetch(`${app.origin}/hello`);
    expect(hello.status).toBe(200);
    expect(await hello.text()).toBe('hello from the app');
    const echoed = await fetch(`${app.origin}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(echoed.status).toBe(200);
    expect(await json(echoed)).toEqual({ got: echo });
    // Outside the prefix, and beside it (/graphite), the app answers its own way.
    for (const path of ['/api/v2/jobs', '/graphite/api/v2/jobs', '/nowhere']) {
      const res = await fetch(`${app.origin}${path}`, { headers: AUTH });
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).toBe('app: not here');
    }
  });

  it("answers unknown routes under the prefix with its own 404 (the envelope under /api/v2, the reference's elsewhere), and wants its token", async () => {
    await expectEnvelope(await fetch(`${app.base}/api/v2/no-such-route`, { headers: AUTH }), 404, 'not_found');
    await expectReferenceNotFound(await fetch(`${app.base}/no-such-route`, { headers: AUTH }));
    // The root under the prefix is the dashboard, its references resolved under the prefix even from `/graph`.
    const dashboard = await fetch(app.base);
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain(`<base href="${new URL(app.base).pathname}/">`);
    await expectEnvelope(await fetch(`${app.base}/api/v2/jobs/${crypto.randomUUID()}`, { headers: AUTH }), 404, 'not_found');
    await expectEnvelope(await fetch(`${app.base}/api/v2/jobs/${crypto.randomUUID()}`), 401, 'unauthorized');
  });

  it('uploads an asset as multipart: its bytes come back equal through a signed link under /graph, fetched without auth', async () => {
    const bytes = trickyPayload();
    const res = await fetch(`${app.base}/api/v2/assets`, { method: 'POST', headers: AUTH, body: uploadForm(bytes, { file_path: 'in/tricky.bin' }) });
    const asset = await json(res);
    expect({ status: res.status, body: asset }).toMatchObject({ status: 201, body: { created_new: true, file_path: 'in/tricky.bin' } });
    expect(asset.hash).toBe(await blake3Of(bytes));
    expect(asset.url.startsWith(`${app.base}/api/v2/assets/${asset.id}/content?`)).toBe(true);

    const content = await fetch(asset.url);
    expect(content.status).toBe(200);
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes);
    // The signature is what lets a bare fetch in.
    const unsigned = new URL(asset.url);
    await expectEnvelope(await fetch(unsigned.origin + unsigned.pathname), 401, 'unauthorized');

    const read = await json(await fetch(`${app.base}/api/v2/assets/${asset.id}`, { headers: AUTH }));
    expect(read.url.startsWith(`${app.base}/api/v2/assets/${asset.id}/content?`)).toBe(true);
  });

  it('runs a JSON-submitted job: Location, urls and output links under /graph, events and output fetchable', async () => {
    const res = await fetch(`${app.base}/api/v2/jobs`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ workflow: saveImageWorkflow(0x2a7f3c, 6, 4, 'express') }),
    });
    const created = await json(res);
    expect({ status: res.status, body: created }).toMatchObject({ status: 201 });
    expectJobShape(created, '/graph');
    expect(res.headers.get('location')).toBe(`/graph/api/v2/jobs/${created.id}`);

    const job = await waitForJob(`${app.origin}${created.urls.self}`);
    expect(job.status).toBe('succeeded');
    expectJobShape(job, '/graph');
    const [output] = job.outputs;
    expect(output.url.startsWith(`${app.base}/api/v2/assets/${output.id}/content?`)).toBe(true);
    const png = new Uint8Array(await (await fetch(output.url)).arrayBuffer());
    expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(await blake3Of(png)).toBe(output.hash);

    // The event stream of the finished job: its status frame carries the same links.
    const events = await fetch(`${app.origin}${created.urls.events}`, { headers: { ...AUTH, accept: 'text/event-stream' } });
    expect(events.status).toBe(200);
    const items = eventsOf(await new SseReader(events.body!).readToEnd(10_000));
    const status = items.find((e) => e.event === 'status')!;
    expect(status.json.status).toBe('succeeded');
    expect(status.json.urls.self).toBe(created.urls.self);
    expect(status.json.outputs[0].url.startsWith(`${app.base}/api/v2/assets/${output.id}/content?`)).toBe(true);
  });

  it('refuses a workflow it cannot run with 422, whatever parsed the body first', async () => {
    const res = await fetch(`${app.base}/api/v2/jobs`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ workflow: { a: { class_type: 'NoSuchNode', inputs: {} } } }),
    });
    await expectEnvelope(res, 422, 'invalid_workflow');
    const broken = await fetch(`${app.base}/api/v2/jobs`, { method: 'POST', headers: JSON_AUTH, body: '{"workflow":' });
    // Refused by the app's own parser or by graphrun, the answer is graphrun's envelope.
    await expectEnvelope(broken, 400, 'malformed_request');
  });

  it('cloud: an uploaded image is served by /graph/api/view through a 302 whose Location is under /graph', async () => {
    const bytes = makePng(3, 2, 4, (x, y) => [x * 70, y * 90, 40, 255]);
    const up = await fetch(`${app.base}/api/upload/image`, { method: 'POST', headers: AUTH, body: imageForm({ bytes }) });
    const uploaded = await json(up);
    expect({ status: up.status, body: uploaded }).toMatchObject({ status: 200, body: { name: expect.any(String) } });
    const view = await fetch(`${app.base}/api/view?filename=${encodeURIComponent(uploaded.name)}&type=input`, { headers: AUTH, redirect: 'manual' });
    expect(view.status).toBe(302);
    const location = view.headers.get('location')!;
    expect(location.startsWith(`${app.base}/api/v2/assets/`)).toBe(true);
    const content = await fetch(location);
    expect(content.status).toBe(200);
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes);
  });

  it('/graph/ws greets with status and relays the messages of a prompt; other upgrade paths are refused', async () => {
    const c = await connectWs(`${app.base}/ws`, { token: TOKEN, clientId: 'express-mount' }, '');
    try {
      const status = await c.waitFor('status', (f) => f.kind === 'text' && f.type === 'status');
      expect(status.kind === 'text' && status.data.sid).toBe('express-mount');
      const res = await fetch(`${app.base}/api/prompt`, {
        method: 'POST',
        headers: JSON_AUTH,
        body: JSON.stringify({ prompt: saveImageWorkflow(0x103050, 4, 4, 'cloud'), client_id: 'express-mount' }),
      });
      const body = await json(res);
      expect({ status: res.status, body }).toMatchObject({ status: 200, body: { prompt_id: expect.stringMatching(UUID) } });
      const id = body.prompt_id;
      await c.waitFor('execution_success', (f) => f.kind === 'text' && f.type === 'execution_success' && f.data.prompt_id === id, 20_000);
      const types = c.jobMessages(id).map((m) => m.type);
      expect(types[0]).toBe('execution_start');
      expect(types).toContain('executed');

      // The output the `executed` message names, through /view under the prefix.
      const [image] = c.jobMessages(id).find((m) => m.type === 'executed')!.data.output.images;
      const view = await fetch(`${app.base}/api/view?filename=${encodeURIComponent(image.filename)}&type=output`, {
        headers: AUTH,
        redirect: 'manual',
      });
      expect(view.status).toBe(302);
      expect(view.headers.get('location')!.startsWith(`${app.base}/`)).toBe(true);
    } finally {
      await c.close();
    }
    const ws = app.base.replace(/^http/, 'ws');
    expect((await refusedUpgrade(`${ws}/ws?token=wrong`)).status).toBe(401);
    expect((await refusedUpgrade(`${ws}/api/v2/ws?token=${TOKEN}`)).status).toBe(404);
    // Not under the prefix: not the service's, and no one else listens here.
    const outside = await refusedUpgrade(`${app.origin.replace(/^http/, 'ws')}/ws?token=${TOKEN}`);
    expect(outside.status).toBe(404);
    expect(outside.body).toMatchObject({ code: 'not_found' });
  });
});
