// GET/HEAD /healthz and /readyz, in process and through a real server:
// ready on working storage and engine; 503 with Retry-After and the failed
// check when the engine is not ready (an engine that says it is starting, a
// worker engine whose one server nobody listens on), when the metadata store
// fails or hangs (with no host named in the answer), and while the service
// is closing. No auth (an operator token changes nothing), never cached.
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import type { EngineReadiness } from '../engine/types.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import type { BlobStore, MetadataStore } from '../storage/types.ts';
import { freePort } from './helpers/free-port.ts';
import { type Harness, MODES, type OpenStorage, startHarness } from './helpers/harness.ts';
import { until } from './helpers/jobs.ts';
import { FAST, startWorkerService } from './helpers/worker-service.ts';

let open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const h of open.reverse()) await h.close();
  open = [];
});

const track = <H extends { close(): Promise<void> }>(h: H): H => {
  open.push(h);
  return h;
};

/** Memory metadata whose ping is `ping` (the rest works): a database that fails, or hangs, only there. */
const storageWithPing =
  (ping: MetadataStore['ping']): OpenStorage =>
  async (blobs: BlobStore) => {
    const { metadata } = createMemoryStorage();
    return { metadata: { ...metadata, ping }, blobs };
  };

async function probe(h: Harness, method: 'GET' | 'HEAD' = 'GET') {
  const res = await h.fetch('/readyz', { method });
  const text = await res.text();
  return { res, body: text === '' ? null : JSON.parse(text) };
}

function expectNotReady(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('5');
  expect(res.headers.get('cache-control')).toBe('no-store');
}

describe.each(MODES)('health and readiness (%s)', (mode) => {
  it('/healthz answers ok without touching storage; HEAD too', async () => {
    const h = track(
      await startHarness(
        mode,
        {},
        storageWithPing(() => Promise.reject(new Error('down'))),
      ),
    );
    const res = await h.fetch('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect((await h.fetch('/healthz', { method: 'HEAD' })).status).toBe(200);
  });

  it('/readyz: 200 when the storage answers and the engine is ready; no auth even with an operator token; HEAD has no body', async () => {
    const h = track(await startHarness(mode, { operatorToken: 'op-secret', accounts: [{ id: 'a', apiKeys: ['k'] }] }));
    const { res, body } = await probe(h);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('retry-after')).toBeNull();
    expect(body).toEqual({ status: 'ready', checks: { storage: { ok: true }, engine: { ok: true, state: 'ready' } } });
    const head = await probe(h, 'HEAD');
    expect(head.res.status).toBe(200);
    expect(head.body).toBeNull();
  });

  it('/readyz: 503 while the engine says it is starting', async () => {
    let readiness: EngineReadiness = { state: 'starting', detail: 'waiting for http://10.1.2.3:8188' };
    const local = createLocalEngine({ threads: false });
    const engine = { ...local, readiness: () => readiness };
    const h = track(await startHarness(mode, { engine }));
    const { res, body } = await probe(h);
    expectNotReady(res);
    expect(body).toEqual({
      status: 'not_ready',
      checks: { storage: { ok: true }, engine: { ok: false, state: 'starting', detail: 'the engine is starting' } },
    });
    // The engine's own words name servers: a probe open to anyone does not repeat them.
    expect(JSON.stringify(body)).not.toContain('10.1.2.3');
    expect((await probe(h, 'HEAD')).res.status).toBe(503);
    readiness = { state: 'ready' };
    expect((await probe(h)).res.status).toBe(200);
  });

  it('/readyz: 503 when the metadata store fails, naming no host; the failure is logged', async () => {
    const logged: string[] = [];
    const logger = { info() {}, warn: (m: string, f?: Record<string, unknown>) => void logged.push(`${m} ${JSON.stringify(f)}`), error() {} };
    const ping = () => Promise.reject(new Error('connect ECONNREFUSED 10.9.8.7:5432'));
    const h = track(await startHarness(mode, { logger }, storageWithPing(ping)));
    const { res, body } = await probe(h);
    expectNotReady(res);
    expect(body).toEqual({
      status: 'not_ready',
      checks: { storage: { ok: false, detail: 'the metadata store could not be reached' }, engine: { ok: true, state: 'ready' } },
    });
    expect(JSON.stringify(body)).not.toContain('10.9.8.7');
    expect(logged).toEqual([expect.stringContaining('10.9.8.7')]);
    // Logged when it starts failing, not at every probe.
    await probe(h);
    expect(logged).toHaveLength(1);
  });

  it('/readyz: 503 when the metadata store hangs, within the bound rather than with it', async () => {
    const h = track(
      await startHarness(
        mode,
        {},
        storageWithPing(() => new Promise<void>(() => {})),
      ),
    );
    const { res, body } = await probe(h);
    expectNotReady(res);
    expect(body.checks.storage).toEqual({ ok: false, detail: 'the metadata store did not answer within 800 ms' });
  });

  it('/readyz: 503 once the service is closing, in its own shape', async () => {
    const h = track(await startHarness(mode));
    expect((await probe(h)).res.status).toBe(200);
    await h.service.close();
    const { res, body } = await probe(h);
    expectNotReady(res);
    expect(body).toEqual({ status: 'not_ready', checks: { service: { ok: false, detail: 'the service is shutting down' } } });
    // Other paths keep the shutdown answer they had.
    const other = await h.fetch('/api/v2/jobs');
    expect(other.status).toBe(503);
    expect(((await other.json()) as any).error.code).toBe('upstream_error');
  });
});

describe('readiness of a worker engine', () => {
  it('is not ready while its only engine server does not answer: 0 of 1 healthy', async () => {
    const port = await freePort();
    const engine = createComfyEngine({ ...FAST, workers: [`http://127.0.0.1:${port}`] });
    const h = track(await startHarness('in-process', { engine }));
    const { res, body } = await probe(h);
    expectNotReady(res);
    expect(body.checks).toEqual({
      storage: { ok: true },
      engine: { ok: false, state: 'starting', detail: '0 of 1 engine servers are healthy (engine starting)', servers_healthy: 0, servers_total: 1 },
    });
  });

  it('is ready once a server answers, counting the healthy ones of the pool', async () => {
    const ws = track(await startWorkerService({ workers: 2 }));
    const { res, body } = await probe(ws);
    expect(res.status).toBe(200);
    expect(body.checks.engine).toEqual({ ok: true, state: 'ready', servers_healthy: 2, servers_total: 2 });
    // One server goes away: still ready on the other, one of two healthy (once the pool has noticed).
    await ws.workers[1].refuse();
    let seen: any;
    await until('the pool noticed the server left', async () => {
      seen = (await probe(ws)).body;
      return seen.checks.engine.servers_healthy === 1;
    });
    expect(seen).toEqual({
      status: 'ready',
      checks: { storage: { ok: true }, engine: { ok: true, state: 'ready', servers_healthy: 1, servers_total: 2 } },
    });
  });
});
