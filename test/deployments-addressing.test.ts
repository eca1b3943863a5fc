// How the deployment gateway finds a deployment, in process and through a
// real server: by host `{id}.{base domain}` (without case, a trailing root dot
// allowed) or `{id}.{staging domain}` for a staging deployment (never the one
// for the other kind), by path prefix `/deployment/{id}` (links in v2 jobs and
// assets and the cloud /view redirect carry it, also under an adapter's
// mount prefix), else the fallback ('default', another, or none: 404). A
// deployment nobody has is 404 in the shape of the surface the path is on.
import { afterEach, describe, expect, it } from 'vitest';
import { uploadForm as imageForm, makePng } from './helpers/cloud-files.ts';
import { type GatewayHarness, type GatewaySpec, quickWorkflow, reply, startGateway } from './helpers/deployments.ts';
import { MODES, uploadForm } from './helpers/harness.ts';
import { getJob, saveImageWorkflow, submitOk, waitForJob } from './helpers/jobs.ts';
import { connectWs } from './helpers/ws-client.ts';

const open: GatewayHarness[] = [];
afterEach(async () => {
  for (const g of open.splice(0).reverse()) await g.close();
});

const THREE: GatewaySpec['deployments'] = [{ id: 'default' }, { id: 'sdxl' }, { id: 'beta', staging: true }];

async function gateway(mode: (typeof MODES)[number], spec: Partial<GatewaySpec> = {}): Promise<GatewayHarness> {
  const g = await startGateway(mode, { deployments: THREE, ...spec });
  open.push(g);
  return g;
}

/** v2 404 `{error:{code:'not_found'}}`. */
async function expectV2NotFound(res: Response) {
  const r = await reply(res);
  expect({ status: r.status, body: r.body }).toEqual({ status: 404, body: { error: { code: 'not_found', message: expect.any(String) } } });
}

/** cloud 404 `{code:'not_found', message}`. */
async function expectCloudNotFound(res: Response) {
  const r = await reply(res);
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 404, body: { code: 'not_found', message: expect.any(String) } });
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
}

describe.each(MODES)('deployment addressing (%s)', (mode) => {
  it('by host: the job made on sdxl.run.example.com is sdxl’s, on its host and its path, not the fallback’s', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ host: 'sdxl' });
    const job = await submitOk(sdxl, quickWorkflow());
    // Host addressing adds no path prefix: the links are today's.
    expect(job.urls.self).toBe(`/api/v2/jobs/${job.id}`);
    expect((await getJob(sdxl, job.id)).res.status).toBe(200);
    expect((await getJob(g.at({ path: 'sdxl' }), job.id)).res.status).toBe(200);
    expect((await getJob(g.at('none'), job.id)).res.status).toBe(404);
    expect((await getJob(g.at({ path: 'default' }), job.id)).res.status).toBe(404);
    await waitForJob(sdxl, job.id, 'succeeded', 15_000);
  });

  it('hosts compare without case and with a trailing root dot', async () => {
    const g = await gateway(mode);
    const job = await submitOk(g.at({ host: 'sdxl' }), quickWorkflow());
    for (const host of ['SDXL.Run.Example.COM', 'sdxl.run.example.com.', 'Beta.STG.run.example.com']) {
      const res = await g.fetchHost(host, host.startsWith('Beta') ? '/api/v2/jobs' : `/api/v2/jobs/${job.id}`);
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
      await res.body?.cancel();
    }
    // And the upper-case name of a deployment nobody has is still not a deployment.
    await expectV2NotFound(await g.fetchHost('NOPE.run.example.com', '/api/v2/jobs'));
  });

  it('staging: a staging deployment answers on the staging domain only, a production one on the base domain only', async () => {
    const g = await gateway(mode);
    const beta = g.at({ staging: 'beta' });
    const job = await submitOk(beta, quickWorkflow());
    expect((await getJob(beta, job.id)).res.status).toBe(200);
    // The staging deployment on the base domain, and a production one on the staging domain: nobody there.
    await expectV2NotFound(await g.at({ host: 'beta' }).fetch(`/api/v2/jobs/${job.id}`));
    await expectV2NotFound(await g.at({ staging: 'sdxl' }).fetch('/api/v2/jobs'));
    await expectCloudNotFound(await g.at({ host: 'beta' }).fetch('/api/queue'));
    // The path prefix reaches any deployment, staging ones included.
    expect((await getJob(g.at({ path: 'beta' }), job.id)).res.status).toBe(200);
    // The message says which kind was looked for.
    const r = await reply(await g.at({ staging: 'sdxl' }).fetch('/api/v2/jobs'));
    expect(r.body.error.message).toContain('staging deployment "sdxl"');
  });

  it('a host of more than one label under a domain names no deployment (404, never the fallback); a domain itself names none', async () => {
    const g = await gateway(mode);
    const job = await submitOk(g.at({ path: 'sdxl' }), quickWorkflow());
    for (const host of ['a.sdxl.run.example.com', 'sdxl.x.run.example.com', 'a.b.stg.run.example.com', 'x.beta.stg.run.example.com']) {
      await expectV2NotFound(await g.fetchHost(host, '/api/v2/jobs'));
      // Nor does a path prefix under such a host reach a deployment (the whole path is the cloud surface's: its 404).
      await expectCloudNotFound(await g.fetchHost(host, `/deployment/sdxl/api/v2/jobs/${job.id}`));
    }
    // The domains themselves: today's URLs go to the fallback, and the path prefix reaches a deployment.
    for (const host of ['run.example.com', 'stg.run.example.com']) {
      const res = await g.fetchHost(host, '/api/v2/jobs');
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
      await res.body?.cancel();
      const viaPrefix = await g.fetchHost(host, `/deployment/sdxl/api/v2/jobs/${job.id}`);
      expect({ host, status: viaPrefix.status }).toEqual({ host, status: 200 });
      await viaPrefix.body?.cancel();
    }
  });

  it('a deployment nobody has: 404 in the surface’s own shape, by host and by path, never another deployment’s answer', async () => {
    const g = await gateway(mode);
    for (const nope of [g.at({ host: 'nope' }), g.at({ path: 'nope' }), g.at({ staging: 'nope' })]) {
      await expectV2NotFound(await nope.fetch('/api/v2/jobs'));
      await expectV2NotFound(await nope.fetch('/api/v2/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
      await expectCloudNotFound(await nope.fetch('/api/queue'));
      await expectCloudNotFound(await nope.fetch('/api/history'));
      // The cloud submission's 404 is a cloud error too.
      await expectCloudNotFound(
        await nope.fetch('/api/prompt', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: {} }) }),
      );
      const video = await reply(await nope.fetch('/proxy/videogen/tasks/abc'));
      expect({ status: video.status, body: video.body }).toEqual({ status: 404, body: { message: expect.any(String), details: expect.any(Array) } });
      const music = await reply(await nope.fetch('/proxy/musicgen/t2m/generate', { method: 'POST', body: new FormData() }));
      expect({ status: music.status, body: music.body }).toEqual({
        status: 404,
        body: { detail: { code: 'not_found', message: expect.any(String) } },
      });
    }
    const r = await reply(await g.at({ path: 'nope' }).fetch('/api/v2/jobs'));
    expect(r.body.error.message).toContain('"nope"');
  });

  it('by path: job Location and urls, asset url and output urls carry /deployment/{id}, and lead back to it', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ path: 'sdxl' });
    const created = await sdxl.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: saveImageWorkflow() }),
    });
    const job: any = await created.json();
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/deployment/sdxl/api/v2/jobs/${job.id}`);
    expect(job.urls).toEqual({
      self: `/deployment/sdxl/api/v2/jobs/${job.id}`,
      events: `/deployment/sdxl/api/v2/jobs/${job.id}/events`,
      cancel: `/deployment/sdxl/api/v2/jobs/${job.id}/cancel`,
    });
    // Following the link from the root of the gateway reaches the job.
    const self = await g.fetch(`${g.base}${job.urls.self}`);
    expect(self.status).toBe(200);
    expect(((await self.json()) as any).id).toBe(job.id);
    const done = await waitForJob(sdxl, job.id, 'succeeded', 15_000);
    expect(done.outputs).toHaveLength(1);
    const out = done.outputs[0];
    expect(out.url.startsWith(`${g.base}/deployment/sdxl/api/v2/assets/${out.id}/content`)).toBe(true);
    const png = await g.fetch(out.url);
    expect(png.status).toBe(200);
    expect([...new Uint8Array(await png.arrayBuffer()).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);

    const up = await sdxl.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('deployment bytes') });
    const asset: any = await up.json();
    expect(up.status).toBe(201);
    expect(asset.url.startsWith(`${g.base}/deployment/sdxl/api/v2/assets/${asset.id}/content?`)).toBe(true);
    const content = await g.fetch(asset.url);
    expect(content.status).toBe(200);
    expect(await content.text()).toBe('deployment bytes');
    // The same signed path on another deployment names nothing there.
    const elsewhere = await g.fetch(asset.url.replace('/deployment/sdxl/', '/deployment/default/'));
    expect([403, 404]).toContain(elsewhere.status);
    await elsewhere.body?.cancel();
  });

  it('by path: the cloud /view redirect carries /deployment/{id} and its target serves the bytes', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ path: 'sdxl' });
    const png = makePng(2, 2, 3, () => [9, 8, 7]);
    const uploaded = await sdxl.fetch('/api/upload/image', { method: 'POST', body: imageForm({ bytes: png }) });
    const image: any = await uploaded.json();
    expect(uploaded.status).toBe(200);
    const view = await sdxl.fetch(`/api/view?filename=${encodeURIComponent(image.name)}&type=input`, { redirect: 'manual' });
    expect(view.status).toBe(302);
    const location = new URL(view.headers.get('location')!);
    expect(location.pathname).toMatch(/^\/deployment\/sdxl\/api\/v2\/assets\/[0-9a-f-]{36}\/content$/);
    const bytes = await g.fetch(location.toString());
    expect(bytes.status).toBe(200);
    expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(png);
    // The fallback never had that file.
    const missing = await g.at('none').fetch(`/api/view?filename=${encodeURIComponent(image.name)}&type=input`, { redirect: 'manual' });
    expect(missing.status).toBe(404);
    await missing.body?.cancel();
  });

  it('no address: the fallback (default) answers today’s URLs, with today’s links', async () => {
    const g = await gateway(mode);
    const root = g.at('none');
    const created = await root.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: quickWorkflow() }),
    });
    const job: any = await created.json();
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/v2/jobs/${job.id}`);
    expect((await getJob(g.at({ path: 'default' }), job.id)).res.status).toBe(200);
    expect((await getJob(g.at({ host: 'default' }), job.id)).res.status).toBe(200);
    expect((await getJob(g.at({ path: 'sdxl' }), job.id)).res.status).toBe(404);
    // The cloud surface at its usual paths, the operator's too.
    expect((await root.fetch('/api/queue')).status).toBe(200);
    expect((await root.fetch('/healthz')).status).toBe(200);
    // A host outside the configured domains names no deployment: the fallback.
    expect((await g.fetchHost('localhost', `/api/v2/jobs/${job.id}`)).status).toBe(200);
  });

  it('fallback: another deployment when named; none (null) answers 404 to a request that names no deployment', async () => {
    const other = await gateway(mode, { deployments: [{ id: 'sdxl' }, { id: 'flux' }], fallback: 'flux' });
    const job = await submitOk(other.at('none'), quickWorkflow());
    expect((await getJob(other.at({ path: 'flux' }), job.id)).res.status).toBe(200);
    expect((await getJob(other.at({ path: 'sdxl' }), job.id)).res.status).toBe(404);

    const none = await gateway(mode, { deployments: [{ id: 'default' }, { id: 'sdxl' }], fallback: null });
    await expectV2NotFound(await none.at('none').fetch('/api/v2/jobs'));
    await expectCloudNotFound(await none.at('none').fetch('/api/queue'));
    // Named deployments still answer.
    expect((await none.at({ host: 'sdxl' }).fetch('/api/v2/jobs')).status).toBe(200);
    expect((await none.at({ path: 'default' }).fetch('/api/v2/jobs')).status).toBe(200);
  });

  it('without a default deployment and no fallback option, unaddressed requests get 404', async () => {
    const g = await gateway(mode, { deployments: [{ id: 'sdxl' }] });
    await expectV2NotFound(await g.at('none').fetch('/api/v2/jobs'));
    expect((await g.at({ path: 'sdxl' }).fetch('/api/v2/jobs')).status).toBe(200);
  });

  it('an adapter mount prefix and the deployment prefix: links carry both and lead back; host addressing keeps only the mount', async () => {
    const g = await gateway(mode, { mountPrefix: '/graph' });
    expect(g.base.endsWith('/graph')).toBe(true);
    const sdxl = g.at({ path: 'sdxl' });
    const created = await sdxl.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: quickWorkflow() }),
    });
    const job: any = await created.json();
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/graph/deployment/sdxl/api/v2/jobs/${job.id}`);
    expect(job.urls.self).toBe(`/graph/deployment/sdxl/api/v2/jobs/${job.id}`);
    const origin = new URL(g.base).origin;
    expect((await g.fetch(`${origin}${job.urls.self}`)).status).toBe(200);

    const up = await sdxl.fetch('/api/v2/assets', { method: 'POST', body: uploadForm('under two prefixes') });
    const asset: any = await up.json();
    expect(asset.url.startsWith(`${origin}/graph/deployment/sdxl/api/v2/assets/${asset.id}/content?`)).toBe(true);
    const content = await g.fetch(asset.url);
    expect(content.status).toBe(200);
    expect(await content.text()).toBe('under two prefixes');

    const byHost = await submitOk(g.at({ host: 'sdxl' }), quickWorkflow());
    expect(byHost.urls.self).toBe(`/graph/api/v2/jobs/${byHost.id}`);
    expect((await getJob(sdxl, byHost.id)).res.status).toBe(200);
  });

  it('pathPrefix: a custom prefix addresses deployments; false addresses by host only', async () => {
    const custom = await gateway(mode, { pathPrefix: '/d' });
    const job = await submitOk(custom.at('none'), quickWorkflow());
    const viaCustom = await custom.at('none').fetch(`/d/default/api/v2/jobs/${job.id}`);
    expect(viaCustom.status).toBe(200);
    expect(((await viaCustom.json()) as any).urls.self).toBe(`/d/default/api/v2/jobs/${job.id}`);
    await expectV2NotFound(await custom.at('none').fetch('/d/nope/api/v2/jobs'));

    const hostOnly = await gateway(mode, { pathPrefix: false });
    // /deployment/sdxl/... is then just a path of the fallback, which has no such route.
    const res = await hostOnly.at({ path: 'sdxl' }).fetch('/api/v2/jobs');
    expect(res.status).toBe(404);
    await res.body?.cancel();
    expect((await hostOnly.at({ host: 'sdxl' }).fetch('/api/v2/jobs')).status).toBe(200);
  });
});

describe('deployment addressing through the Node adapter (node-server)', () => {
  it('the adapter’s own refusals (a body over its limit) answer in the shape of the surface the deployment’s path is on', async () => {
    const g = await gateway('node-server', { maxBodyBytes: 64 });
    const big = 'x'.repeat(1024);
    const addressed = await reply(await g.at({ path: 'sdxl' }).fetch('/api/v2/assets', { method: 'POST', body: big }));
    expect({ status: addressed.status, body: addressed.body }).toEqual({
      status: 413,
      body: { error: { code: 'payload_too_large', message: expect.any(String) } },
    });
    const byHost = await reply(await g.at({ host: 'sdxl' }).fetch('/api/v2/assets', { method: 'POST', body: big }));
    expect(byHost.body).toEqual({ error: { code: 'payload_too_large', message: expect.any(String) } });
    // A deployment nobody has: still the v2 envelope, as its 404s are (the path after the prefix is a v2 path).
    const unknown = await reply(await g.at({ path: 'nope' }).fetch('/api/v2/assets', { method: 'POST', body: big }));
    expect(unknown.body).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
    // A refusal made after the body was read (an adapter failing mid-request): the shape still follows the path.
    for (const id of ['sdxl', 'nope']) {
      const read = new Request(`http://gw.test/deployment/${id}/api/v2/assets`, { method: 'POST', body: big });
      await read.text();
      const late = await reply(g.gateway.refuse(500, undefined, read));
      expect({ id, status: late.status, body: late.body }).toEqual({
        id,
        status: 500,
        body: { error: { code: 'upstream_error', message: expect.any(String) } },
      });
    }
  });

  it('/ws under an adapter mount prefix and the deployment prefix reaches the deployment', async () => {
    const g = await gateway('node-server', { mountPrefix: '/graph' });
    const root = `http://127.0.0.1:${g.port}`;
    const c = await connectWs(root, { clientId: 'mounted' }, '/graph/deployment/sdxl/ws');
    try {
      await c.waitFor('status', (f) => f.kind === 'text' && f.type === 'status', 10_000);
      const job = await submitOk(g.at({ path: 'sdxl' }), quickWorkflow(31));
      await c.waitFor('job end', (f) => f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === job.id && f.data.node === null, 15_000);
    } finally {
      await c.close();
    }
  });
});
