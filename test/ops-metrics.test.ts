// GET /metrics and GET /ops/status, in process and through a real server,
// after real activity: uploads on both surfaces (a deduplicated one
// included), jobs of a `pro` account run to success and failure, jobs of a
// `free` account held queued (its tier may run none), an SSE stream and a
// /ws connection open. The exposition is read with a Prometheus parser and
// every value checked; the status JSON is checked whole. Both need the
// operator token when one is set, and an account key does not open them.
// A storage that fails leaves the job families out; a worker engine's
// servers show healthy and busy; the deployment's condition follows a stop.
import { afterEach, describe, expect, it } from 'vitest';
import type { WsPeer } from '../core/types.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import type { BlobStore } from '../storage/types.ts';
import { asApiKey, makePng, uploadImageOk } from './helpers/cloud-files.ts';
import { type Harness, MODES, type Mode, startHarness, uploadForm } from './helpers/harness.ts';
import { asKey, cancelJob, runJob, startJobs, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';
import { readMetrics } from './helpers/prometheus.ts';
import { SseReader } from './helpers/sse-client.ts';
import { startWorkerService } from './helpers/worker-service.ts';
import { connectWs } from './helpers/ws-client.ts';

const OP = 'op-secret';
const ACCOUNTS = [
  { id: 'alice', tier: 'pro', apiKeys: ['key-pro'] },
  { id: 'bob', tier: 'free', apiKeys: ['key-free'] },
];
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const FAILING = {
  f1: { class_type: 'Number', inputs: { value: 1 } },
  f2: { class_type: 'Fail', inputs: { value: ['f1', 0] } },
  f3: { class_type: 'Show', inputs: { value: ['f2', 0] } },
};

let open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const h of open.reverse()) await h.close();
  open = [];
});

const operator = { authorization: `Bearer ${OP}` };

async function scrape(h: Harness) {
  const res = await h.fetch('/metrics', { headers: operator });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(CONTENT_TYPE);
  return readMetrics(await res.text());
}

async function status(h: Harness): Promise<any> {
  const res = await h.fetch('/ops/status', { headers: operator });
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return res.json();
}

/** A /ws connection of the account with `key`: a real client through the server, the service's hooks in process. */
async function openWs(h: Harness, mode: Mode, key: string): Promise<() => Promise<void>> {
  if (mode === 'node-server') {
    const client = await connectWs(h.base, { token: key });
    await client.waitFor('the greeting', (f) => f.kind === 'text' && f.type === 'status');
    return () => client.close();
  }
  const hooks = h.service.websocket;
  const request = new Request(`http://graphrun.test/ws?token=${key}`);
  const accepted = await hooks.upgrade(request);
  if (accepted instanceof Response) throw new Error(`upgrade refused: ${accepted.status}`);
  const peer: WsPeer = { id: crypto.randomUUID(), request, context: accepted.context, send() {}, close() {} };
  hooks.open(peer);
  return async () => hooks.close(peer, 1000, '');
}

describe.each(MODES)('operator metrics and status (%s)', (mode) => {
  it('need the operator token: none or an account key is refused with 401', async () => {
    const h = await startJobs(mode, { accounts: ACCOUNTS, operatorToken: OP });
    open.push(h);
    for (const path of ['/metrics', '/ops/status']) {
      const refused: Array<Record<string, string>> = [{}, { authorization: 'Bearer key-pro' }, { authorization: 'Bearer op-secret-not' }];
      for (const headers of refused) {
        const res = await h.fetch(path, { headers });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="graphrun-operator"');
        expect(((await res.json()) as any).error.code).toBe('unauthorized');
      }
      expect((await h.fetch(path, { headers: operator })).status).toBe(200);
    }
  });

  it('are open without an operator token', async () => {
    const h = await startJobs(mode);
    open.push(h);
    expect((await h.fetch('/metrics')).status).toBe(200);
    expect((await h.fetch('/ops/status')).status).toBe(200);
  });

  it("show the deployment's condition, and follow a stop and a start", async () => {
    const h = await startJobs(mode, { operatorToken: OP, deploymentId: 'sdxl' });
    open.push(h);
    const condition = async () => {
      const m = await scrape(h);
      return Object.fromEntries(
        ['ready', 'not_ready', 'stopped'].map((c) => [c, m.value('graphrun_deployment_condition', { deployment: 'sdxl', condition: c })]),
      );
    };
    expect(await condition()).toEqual({ ready: 1, not_ready: 0, stopped: 0 });
    expect((await h.fetch('/ops/deployment/stop', { method: 'POST', headers: operator })).status).toBe(200);
    expect(await condition()).toEqual({ ready: 0, not_ready: 0, stopped: 1 });
    expect((await h.fetch('/ops/deployment/start', { method: 'POST', headers: operator })).status).toBe(200);
    expect(await condition()).toEqual({ ready: 1, not_ready: 0, stopped: 0 });
  });

  it('count what happened: jobs by status and tier, the queue held back, durations, uploads, open streams and sockets', async () => {
    // The free tier may run no job: bob's stay queued, the autoscaler's signal.
    const h = await startJobs(mode, { accounts: ACCOUNTS, operatorToken: OP, tierLimits: { free: 0 } });
    open.push(h);
    const alice = asKey(h, 'key-pro');
    const bob = asKey(h, 'key-free');

    // Uploads: two new on v2 and one deduplicated (counted too: it was uploaded), one on the cloud surface.
    for (const text of ['hello', 'seven!!', 'hello']) {
      const res = await alice.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(text) });
      expect(res.status).toBeLessThan(300);
    }
    const png = makePng(2, 2, 3, () => [255, 0, 0]);
    await uploadImageOk(asApiKey(h, 'key-pro'), { bytes: png });

    expect((await runJob(alice, sumWorkflow('a'))).status).toBe('succeeded');
    expect((await runJob(alice, sumWorkflow('b', 5, 6))).status).toBe('succeeded');
    expect((await runJob(alice, FAILING)).status).toBe('failed');
    const held = [await submitOk(bob, sumWorkflow('q')), await submitOk(bob, sumWorkflow('r'))];
    const oldest = Math.min(...held.map((j) => Date.parse(j.created_at)));

    // One event stream on a job that never ends here, one /ws connection.
    const events = await bob.fetch(`/api/v2/jobs/${held[0].id}/events`);
    expect(events.status).toBe(200);
    const sse = new SseReader(events.body!);
    expect((await sse.nextEvent())?.event).toBe('status');
    const closeWs = await openWs(h, mode, 'key-pro');

    // A run's row ends before the run itself has (its timing is observed just after): wait for the runs.
    await until('the three runs have ended here', async () => {
      const now = await scrape(h);
      const ended = (status: string) => {
        try {
          return now.histogram('graphrun_job_duration_seconds', { status }).count;
        } catch {
          return 0; // no series before the first observation
        }
      };
      return now.value('graphrun_jobs_running_here') === 0 && ended('succeeded') === 2 && ended('failed') === 1;
    });
    const before = Date.now();
    const m = await scrape(h);
    const after = Date.now();

    for (const f of m.families.filter((f) => f.name.startsWith('graphrun_'))) {
      expect(f.help, f.name).not.toBe('');
      expect(f.type, f.name).not.toBe('UNTYPED');
    }
    expect(m.value('graphrun_ready')).toBe(1);
    expect(m.value('graphrun_engine_ready')).toBe(1);
    const jobs = Object.fromEntries(m.family('graphrun_jobs').metrics.map((s) => [`${s.labels!.tier}/${s.labels!.status}`, Number(s.value)]));
    expect(jobs).toEqual({
      'pro/queued': 0,
      'pro/running': 0,
      'pro/succeeded': 2,
      'pro/failed': 1,
      'pro/canceling': 0,
      'pro/canceled': 0,
      'free/queued': 2,
      'free/running': 0,
      'free/succeeded': 0,
      'free/failed': 0,
      'free/canceling': 0,
      'free/canceled': 0,
    });
    expect(m.value('graphrun_queue_depth', { tier: 'free' })).toBe(2);
    expect(m.value('graphrun_queue_depth', { tier: 'pro' })).toBe(0);
    const age = m.value('graphrun_queue_oldest_age_seconds', { tier: 'free' });
    expect(age).toBeGreaterThanOrEqual((before - oldest) / 1000);
    expect(age).toBeLessThanOrEqual((after - oldest) / 1000);
    expect(m.value('graphrun_queue_oldest_age_seconds', { tier: 'pro' })).toBe(0);

    const succeeded = m.histogram('graphrun_job_duration_seconds', { status: 'succeeded' });
    expect(succeeded.count).toBe(2);
    expect(succeeded.buckets['+Inf']).toBe(2);
    expect(succeeded.sum).toBeGreaterThanOrEqual(0);
    expect(m.histogram('graphrun_job_duration_seconds', { status: 'failed' }).count).toBe(1);
    // Started here: alice's three; bob's never started.
    const wait = m.histogram('graphrun_job_queue_wait_seconds');
    expect(wait.count).toBe(3);
    expect(wait.buckets['+Inf']).toBe(3);

    expect(m.value('graphrun_uploads_total', { surface: 'v2' })).toBe(3);
    expect(m.value('graphrun_upload_bytes_total', { surface: 'v2' })).toBe(5 + 7 + 5);
    expect(m.value('graphrun_uploads_total', { surface: 'cloud' })).toBe(1);
    expect(m.value('graphrun_upload_bytes_total', { surface: 'cloud' })).toBe(png.length);

    expect(m.value('graphrun_sse_streams')).toBe(1);
    expect(m.value('graphrun_websockets')).toBe(1);
    expect(m.value('graphrun_jobs_running_here')).toBe(0);
    // An in-process engine has no servers to report.
    expect(m.families.some((f) => f.name.startsWith('graphrun_engine_server'))).toBe(false);

    // The same collection, as the dashboard's operator panel reads it.
    const s = await status(h);
    expect(s).toEqual({
      ready: true,
      deployment: { id: 'default', state: 'ready', detail: null, engine: { name: 'local', state: 'ready' } },
      engine: { name: 'local', readiness: { state: 'ready' }, servers: [] },
      queues: [
        { tier: 'free', queued: 2, running: 0, oldest_queued_seconds: expect.any(Number) },
        { tier: 'pro', queued: 0, running: 0, oldest_queued_seconds: null },
      ],
      instance: { run_jobs: true, sse_streams: 1, websockets: 1 },
    });
    expect(s.queues[0].oldest_queued_seconds).toBeGreaterThanOrEqual(age);

    // Closed by their clients: the gauges come back down once the service has seen them go.
    await sse.cancel();
    await closeWs();
    await until('the stream and the socket are gone from the gauges', async () => {
      const now = await scrape(h);
      return now.value('graphrun_sse_streams') === 0 && now.value('graphrun_websockets') === 0;
    });
  });

  it('a storage that fails: graphrun_ready 0 and no job families; the status says not ready with no queues', async () => {
    const failing = async (blobs: BlobStore) => {
      const { metadata } = createMemoryStorage();
      return { metadata: { ...metadata, countJobsByTier: () => Promise.reject(new Error('connection reset')) }, blobs };
    };
    const h = await startHarness(mode, { logger: { info() {}, warn() {}, error() {} } }, failing);
    open.push(h);
    const m = await scrape(h);
    expect(m.value('graphrun_ready')).toBe(0);
    expect(m.value('graphrun_engine_ready')).toBe(1);
    expect(m.families.map((f) => f.name)).not.toContain('graphrun_jobs');
    expect(m.families.map((f) => f.name)).not.toContain('graphrun_queue_depth');
    expect(m.value('graphrun_uploads_total', { surface: 'v2' })).toBe(0);
    const s = await status(h);
    expect(s.ready).toBe(false);
    expect(s.queues).toEqual([]);
  });

  it('a runtime metrics source is appended; one that fails leaves the service its own', async () => {
    const extra = '# HELP runtime_thing A runtime metric.\n# TYPE runtime_thing gauge\nruntime_thing 7\n';
    let fail = false;
    const source = { collect: async () => (fail ? Promise.reject(new Error('no')) : extra) };
    const h = await startJobs(mode, { metrics: source, logger: { info() {}, warn() {}, error() {} } });
    open.push(h);
    expect((await scrape(h)).value('runtime_thing')).toBe(7);
    fail = true;
    const m = await scrape(h);
    expect(m.families.map((f) => f.name)).not.toContain('runtime_thing');
    expect(m.value('graphrun_ready')).toBe(1);
  });
});

describe('engine servers in the metrics and the status (worker engine)', () => {
  it('each server healthy, busy with the prompts of this service on it, and its slots', async () => {
    const ws = await startWorkerService({ workers: 2, service: { operatorToken: OP } });
    open.push(ws);
    const urls = ws.workers.map((w) => w.url);
    const job = await submitOk(ws, waitWorkflow(1, 600_000));
    await waitForJob(ws, job.id, 'running');
    await until('the job holds a slot', () => (ws.engine.servers?.() ?? []).some((s) => s.busy === 1));

    const m = await scrape(ws);
    for (const url of urls) {
      expect(m.value('graphrun_engine_server_healthy', { server: url })).toBe(1);
      expect(m.value('graphrun_engine_server_slots', { server: url })).toBe(1);
    }
    expect(urls.map((server) => m.value('graphrun_engine_server_busy', { server })).sort()).toEqual([0, 1]);
    expect(m.value('graphrun_jobs_running_here')).toBe(1);
    expect(m.value('graphrun_jobs', { tier: 'default', status: 'running' })).toBe(1);

    const s = await status(ws);
    expect(s.engine.name).toBe('comfyui');
    expect(s.engine.readiness).toEqual({ state: 'ready' });
    expect(s.engine.servers).toEqual(urls.map((url) => ({ url, healthy: true, busy: expect.any(Number), slots: 1 })));
    expect(s.engine.servers.reduce((n: number, x: any) => n + x.busy, 0)).toBe(1);
    expect(s.queues).toEqual([{ tier: 'default', queued: 0, running: 1, oldest_queued_seconds: null }]);

    // A server going away reads unhealthy once the pool has noticed.
    const idle = ws.engine.servers!().find((x) => x.busy === 0)!;
    await ws.workers[urls.indexOf(idle.url)].refuse();
    await until('the pool noticed', async () => (await scrape(ws)).value('graphrun_engine_server_healthy', { server: idle.url }) === 0);
    await cancelJob(ws, job.id);
    await waitForJob(ws, job.id, 'canceled');
  });
});
