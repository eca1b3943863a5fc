// A deployment's condition over time, and the operator's routes, in process
// and through a real server: stop while a job runs and another waits (the
// running one finishes, the waiting one stays queued) then start (it runs to
// succeeded); not ready -> ready when a worker engine's server comes up;
// /readyz stays ready while stopped; /ws upgrades are refused while stopped;
// who may read and move the condition; GET /ops/deployments at the gateway's
// root; the operator surface's OpenAPI document.
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import { type FakeWorker, startFakeWorker } from './fakes/comfyui-worker.ts';
import {
  type GatewayHarness,
  type GatewaySpec,
  holdWorkflow,
  OPERATOR,
  opAuth,
  pollUntil,
  quickWorkflow,
  reply,
  startGateway,
} from './helpers/deployments.ts';
import { freePort } from './helpers/free-port.ts';
import { type Harness, MODES } from './helpers/harness.ts';
import { getJob, submitOk, waitForJob } from './helpers/jobs.ts';
import { MUSIC_PATH, musicForm } from './helpers/music.ts';
import { eventsOf, openEvents } from './helpers/sse-client.ts';
import { FAST } from './helpers/worker-service.ts';
import { connectWs, refusedUpgrade } from './helpers/ws-client.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const g of open.splice(0).reverse()) await g.close();
});

async function gateway(mode: (typeof MODES)[number], spec: Partial<GatewaySpec> = {}): Promise<GatewayHarness> {
  const g = await startGateway(mode, { deployments: [{ id: 'default' }, { id: 'sdxl' }, { id: 'beta', staging: true }], ...spec });
  open.push(g);
  return g;
}

const move = (h: Harness, what: 'stop' | 'start', headers: Record<string, string> = opAuth()) =>
  h.fetch(`/ops/deployment/${what}`, { method: 'POST', headers });
const viewOf = async (h: Harness) => (await reply(await h.fetch('/ops/deployment', { headers: opAuth() }))).body;

describe.each(MODES)('deployment transitions (%s)', (mode) => {
  it('ready -> stopped: the running job finishes, the queued one stays queued; -> started: the queued job runs to succeeded', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ host: 'sdxl' });
    const { holds } = g.deployments.sdxl!.engine;
    const running = await submitOk(sdxl, holdWorkflow('running'));
    await holds.started('running');
    // The local account runs one job at a time: this one waits behind the first.
    const queued = await submitOk(sdxl, holdWorkflow('queued'));
    expect((await getJob(sdxl, queued.id)).body.status).toBe('queued');
    // Streams opened before the stop keep telling (they are how a client learns the run ended).
    const runningEvents = await openEvents(sdxl, running.id);
    expect(runningEvents.res.status).toBe(200);

    const stopped = await reply(await move(sdxl, 'stop'));
    expect(stopped.status).toBe(200);
    expect(stopped.headers.get('cache-control')).toBe('no-store');
    expect(stopped.body).toEqual({
      id: 'sdxl',
      state: 'stopped',
      detail: expect.stringMatching(/^stopped by an operator at \d{4}-\d\d-\d\dT/),
      engine: { name: expect.any(String), state: 'ready' },
    });
    // A second stop keeps the first one's time.
    const again = await reply(await move(sdxl, 'stop'));
    expect(again.body.detail).toBe(stopped.body.detail);

    holds.release('running');
    const items = eventsOf(await runningEvents.sse!.readToEnd(15_000));
    expect(items.at(-1)).toMatchObject({ event: 'status', json: { id: running.id, status: 'succeeded' } });
    // The scheduler looked for work when the run ended, and found the deployment stopped.
    expect(holds.runs.queued).toBeUndefined();
    expect((await viewOf(sdxl)).state).toBe('stopped');
    expect(holds.runs.queued).toBeUndefined();

    const startedAt = Date.now();
    const started = await reply(await move(sdxl, 'start'));
    expect(started.body).toEqual({ id: 'sdxl', state: 'ready', detail: null, engine: { name: expect.any(String), state: 'ready' } });
    await holds.started('queued');
    const job = await waitForJob(sdxl, queued.id, 'running', 15_000);
    // It began after the start, not while stopped.
    expect(Date.parse(job.started_at)).toBeGreaterThanOrEqual(startedAt - 1);
    holds.release('queued');
    const done = await waitForJob(sdxl, queued.id, 'succeeded', 15_000);
    expect(done.outputs_reused).toBe(false);
    expect((await waitForJob(sdxl, running.id, 'succeeded')).status).toBe('succeeded');
  });

  it('/readyz stays ready while stopped (clients must reach the deployment to be told deployment_stopped); GET /ops/deployment says stopped', async () => {
    const g = await gateway(mode);
    const sdxl = g.at({ path: 'sdxl' });
    const READY = { status: 'ready', checks: { storage: { ok: true }, engine: { ok: true, state: 'ready' } } };
    const ready = await reply(await sdxl.fetch('/readyz'));
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 200, body: READY });
    expect((await move(sdxl, 'stop')).status).toBe(200);
    const stopped = await reply(await sdxl.fetch('/readyz'));
    // A load balancer that took it out of rotation would turn deployment_stopped into a connection error.
    expect({ status: stopped.status, body: stopped.body }).toEqual({ status: 200, body: READY });
    expect((await viewOf(sdxl)).state).toBe('stopped');
    const refused = await reply(await sdxl.fetch('/api/v2/jobs'));
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 422, code: 'deployment_stopped' });
    expect((await g.at('none').fetch('/readyz')).status).toBe(200);
    expect((await move(sdxl, 'start')).status).toBe(200);
    expect((await sdxl.fetch('/readyz')).status).toBe(200);
  });

  it('operator auth: reading and moving need the token when one is set (401 without or wrong, account keys do not open it)', async () => {
    const g = await gateway(mode, {
      deployments: [{ id: 'default' }, { id: 'sdxl', options: { accounts: [{ id: 'acct', apiKeys: ['acct-key'] }] } }],
    });
    const sdxl = g.at({ host: 'sdxl' });
    for (const headers of [{}, opAuth('wrong'), { authorization: 'Bearer acct-key' }, { authorization: OPERATOR }]) {
      for (const what of ['stop', 'start'] as const) {
        const r = await reply(await move(sdxl, what, headers));
        expect({ what, headers, status: r.status, body: r.body }).toEqual({
          what,
          headers,
          status: 401,
          body: { error: { code: 'unauthorized', message: expect.any(String) } },
        });
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      const read = await sdxl.fetch('/ops/deployment', { headers });
      expect(read.status).toBe(401);
      await read.body?.cancel();
    }
    // Nothing moved.
    expect((await viewOf(sdxl)).state).toBe('ready');
    expect((await sdxl.fetch('/api/v2/jobs', { headers: { authorization: 'Bearer acct-key' } })).status).toBe(200);
  });

  it('operator auth: a deployment without an operator token can be read by anyone but never moved (403)', async () => {
    const g = await gateway(mode, { deployments: [{ id: 'default' }, { id: 'open', operatorToken: null }] });
    const d = g.at({ path: 'open' });
    const read = await reply(await d.fetch('/ops/deployment'));
    expect({ status: read.status, body: read.body }).toEqual({
      status: 200,
      body: { id: 'open', state: 'ready', detail: null, engine: { name: expect.any(String), state: 'ready' } },
    });
    for (const what of ['stop', 'start'] as const) {
      for (const headers of [{}, opAuth()]) {
        const r = await reply(await move(d, what, headers));
        expect({ status: r.status, body: r.body }).toEqual({ status: 403, body: { error: { code: 'forbidden', message: expect.any(String) } } });
      }
    }
    expect((await viewOf(d)).state).toBe('ready');
    expect((await d.fetch('/api/v2/jobs')).status).toBe(200);
  });

  it('GET /ops/deployments at the gateway root: every deployment with staging and fallback, as each is now; 401 without the token', async () => {
    const g = await gateway(mode);
    const root = g.at('none');
    expect((await move(g.at({ path: 'sdxl' }), 'stop')).status).toBe(200);
    g.deployments.beta!.engine.setReadiness({ state: 'starting', detail: 'loading' });
    const list = await reply(await root.fetch('/ops/deployments', { headers: opAuth() }));
    expect(list.status).toBe(200);
    expect(list.headers.get('cache-control')).toBe('no-store');
    const engine = { name: expect.any(String), state: expect.any(String) };
    expect(list.body).toEqual({
      deployments: [
        { id: 'default', state: 'ready', detail: null, engine, staging: false, fallback: true },
        { id: 'sdxl', state: 'stopped', detail: expect.stringContaining('stopped by an operator'), engine, staging: false, fallback: false },
        {
          id: 'beta',
          state: 'not_ready',
          detail: 'loading',
          engine: { name: expect.any(String), state: 'starting' },
          staging: true,
          fallback: false,
        },
      ],
    });
    for (const headers of [{}, opAuth('wrong')]) {
      const r = await reply(await root.fetch('/ops/deployments', { headers }));
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 401, code: 'unauthorized' });
    }
    // It is the gateway's route at its root: a deployment's own address has none.
    const onHost = await g.at({ host: 'sdxl' }).fetch('/ops/deployments', { headers: opAuth() });
    expect(onHost.status).toBe(404);
    await onHost.body?.cancel();
  });

  it('GET /ops/deployments under an adapter mount prefix; with no fallback it still lists every deployment', async () => {
    const g = await gateway(mode, { mountPrefix: '/graph', fallback: null });
    const r = await reply(await g.at('none').fetch('/ops/deployments', { headers: opAuth() }));
    expect(r.status).toBe(200);
    expect(r.body.deployments.map((d: any) => [d.id, d.fallback, d.staging])).toEqual([
      ['default', false, false],
      ['sdxl', false, false],
      ['beta', false, true],
    ]);
  });

  it('the operator OpenAPI document has the three /ops/deployment operations and the Deployment schema', async () => {
    const g = await gateway(mode);
    for (const h of [g.at('none'), g.at({ path: 'sdxl' }), g.at({ host: 'sdxl' })]) {
      const doc = (await reply(await h.fetch('/openapi.json', { headers: opAuth() }))).body;
      expect(doc.paths['/ops/deployment'].get).toMatchObject({ operationId: 'getDeployment' });
      expect(doc.paths['/ops/deployment/stop'].post).toMatchObject({ operationId: 'stopDeployment', security: [{ operatorToken: [] }] });
      expect(doc.paths['/ops/deployment/start'].post).toMatchObject({ operationId: 'startDeployment', security: [{ operatorToken: [] }] });
      for (const op of [doc.paths['/ops/deployment/stop'].post, doc.paths['/ops/deployment/start'].post]) {
        expect(Object.keys(op.responses).sort()).toEqual(['200', '401', '403']);
      }
      expect(doc.components.schemas.Deployment.properties.state.enum).toEqual(['ready', 'not_ready', 'stopped']);
    }
  });

  it('not ready -> ready: a worker engine whose server is down refuses submissions with 429, then takes them once the server comes up', async () => {
    const port = await freePort();
    const engine = createComfyEngine({ ...FAST, workers: [`http://127.0.0.1:${port}`], log: () => {} });
    const g = await gateway(mode, { deployments: [{ id: 'default' }, { id: 'pool', engine, options: { maxConcurrentJobs: 2 } }] });
    const pool = g.at({ path: 'pool' });
    const before = await viewOf(pool);
    expect(before).toMatchObject({ id: 'pool', state: 'not_ready', detail: expect.any(String) });
    expect(['starting', 'unavailable']).toContain(before.engine.state);
    const refused = await reply(
      await pool.fetch('/api/v2/jobs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: quickWorkflow() }),
      }),
    );
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 429, code: 'deployment_not_ready' });
    expect(refused.headers.get('retry-after')).toBe('5');
    const musicRefused = await reply(await pool.fetch(MUSIC_PATH, { method: 'POST', body: musicForm({ prompt: 'x', duration: '1' }) }));
    expect({ status: musicRefused.status, code: musicRefused.body.detail?.code }).toEqual({ status: 429, code: 'deployment_not_ready' });
    // The API's clients are not told where the engine servers are (as /readyz does not tell them).
    expect(JSON.stringify(refused.body)).not.toContain(`127.0.0.1:${port}`);
    expect(JSON.stringify(musicRefused.body)).not.toContain(`127.0.0.1:${port}`);
    expect((await pool.fetch('/readyz')).status).toBe(503);

    let worker: FakeWorker | undefined;
    try {
      worker = await startFakeWorker({ port });
      await pollUntil(
        'the pool deployment ready',
        () => viewOf(pool),
        (v) => v.state === 'ready',
        20_000,
      );
      const job = await submitOk(pool, quickWorkflow(4));
      await waitForJob(pool, job.id, 'succeeded', 20_000);
      expect((await pool.fetch('/readyz')).status).toBe(200);
    } finally {
      // The gateway (and the engine) go first, then the server they talk to.
      await g.close();
      await worker?.close();
    }
  });
});

describe('deployment transitions on /ws (node-server)', () => {
  it('a stopped deployment refuses /ws upgrades (422 deployment_stopped, by host and by path); started, it accepts them again', async () => {
    const g = await gateway('node-server');
    const root = `http://127.0.0.1:${g.port}`;
    const host = { host: `sdxl.run.example.com:${g.port}` };
    expect((await move(g.at({ host: 'sdxl' }), 'stop')).status).toBe(200);
    for (const [url, headers] of [
      [`ws://127.0.0.1:${g.port}/ws`, host],
      [`ws://127.0.0.1:${g.port}/deployment/sdxl/ws`, {}],
      [`ws://127.0.0.1:${g.port}/deployment/sdxl/api/ws`, {}],
    ] as const) {
      const refused = await refusedUpgrade(url, headers);
      expect({ url, status: refused.status, body: refused.body }).toEqual({
        url,
        status: 422,
        body: { code: 'deployment_stopped', message: expect.stringContaining('"sdxl"') },
      });
    }
    // Other deployments take connections.
    const other = await connectWs(root, { clientId: 'fallback-client' }, '/ws');
    await other.waitFor('status', (f) => f.kind === 'text' && f.type === 'status', 10_000);
    await other.close();

    expect((await move(g.at({ host: 'sdxl' }), 'start')).status).toBe(200);
    const c = await connectWs(root, { clientId: 'after-start' }, '/ws', host);
    try {
      await c.waitFor('status', (f) => f.kind === 'text' && f.type === 'status', 10_000);
      const job = await submitOk(g.at({ host: 'sdxl' }), quickWorkflow(2));
      await c.waitFor('job end', (f) => f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === job.id && f.data.node === null, 15_000);
    } finally {
      await c.close();
    }
  });
});
