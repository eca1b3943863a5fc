// Isolation benchmark (npm run bench:isolation): does one account's heavy job
// hold up everybody else? A Node server on SQLite in this process, two
// accounts. One runs the heaviest job the defaults allow (EmptyImage 2048²
// scaled bicubic up to 4096² and back, six times, then saved: about 0.8 GB
// of images alive at its peak, under the 1 GiB maxJobMemoryBytes); the other
// polls GET /api/v2/jobs/{id} of its own job, one request after the other.
// Printed, each next to its baseline from the same run:
// 1. the poller's p50/p99 while the heavy job runs vs with no heavy job
//    (target: p99 ratio < 3);
// 2. the event-loop delay p99 of the serving thread while it runs (target
//    < 20 ms);
// 3. cancel -> `canceled` on the job's event stream, sent while a node
//    computes (target < 250 ms);
// 4. the process's peak RSS against the budget (what the process held
//    before, plus maxJobMemoryBytes and cacheBytes).
// The same figures with the engine on the serving thread (threads: false,
// the engine before worker threads) are printed beside them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serve } from '../adapters/node/server.ts';
import type { Workflow } from '../engine/types.ts';
import { createService, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { heavyWorkflow } from '../test/helpers/jobs.ts';
import { SseReader } from '../test/helpers/sse-client.ts';

const MiB = 1024 * 1024;
const BUDGET = 1024 * MiB;
const CACHE = 256 * MiB;
const BASELINE_MS = 3_000;
const CANCELS = 5;
const accounts = [
  { id: 'heavy', tier: 'free', apiKeys: ['key-heavy'] },
  { id: 'poller', tier: 'free', apiKeys: ['key-poller'] },
];

let colors = 0x8040c0;
/** The heaviest job the defaults allow, in a colour of its own each time: a repeated workflow would be served from the cache. */
const heavy = () => heavyWorkflow({ steps: 6, small: 2048, large: 4096, color: colors++ });

let resets = 0;

interface Server {
  base: string;
  call(key: string, path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

async function start(threads: boolean): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-isolation-'));
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });
  const service = await createService({
    storage,
    accounts,
    logger: silentLogger,
    sweepIntervalMs: 0,
    maxJobMemoryBytes: BUDGET,
    localEngine: { cacheBytes: CACHE, ...(threads ? {} : { threads: false }) },
  });
  const server = await serve(service, { host: '127.0.0.1', port: 0 });
  return {
    base: server.url,
    async call(key, path, init = {}) {
      for (;;) {
        try {
          return await fetch(server.url + path, {
            ...init,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
          });
        } catch (err) {
          // A keep-alive connection the server dropped while its thread was blocked: counted, and tried again.
          if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
          resets++;
        }
      }
    },
    async close() {
      await server.close();
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function submit(server: Server, key: string, workflow: Workflow): Promise<string> {
  const res = await server.call(key, '/api/v2/jobs', { method: 'POST', body: JSON.stringify({ workflow }) });
  const body = (await res.json()) as { id: string };
  if (res.status !== 201) throw new Error(`submit: ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

async function statusOf(server: Server, key: string, id: string): Promise<string> {
  return ((await (await server.call(key, `/api/v2/jobs/${id}`)).json()) as { status: string }).status;
}

async function until(server: Server, key: string, id: string, statuses: string[]): Promise<string> {
  for (;;) {
    const status = await statusOf(server, key, id);
    if (statuses.includes(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls one job, one request after another, until `done` says stop; returns each request's milliseconds. */
async function poll(server: Server, id: string, done: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!done()) {
    const t0 = performance.now();
    const res = await server.call('key-poller', `/api/v2/jobs/${id}`);
    await res.arrayBuffer();
    times.push(performance.now() - t0);
  }
  return times;
}

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

/**
 * Reads a job's stream until it runs, then lets a node start computing.
 * (Progress snapshots cannot be waited for: with the engine on the serving
 * thread, none goes out while a node computes.)
 */
async function untilComputing(sse: SseReader): Promise<void> {
  for (;;) {
    const event = await sse.nextEvent(120_000);
    if (!event) throw new Error('the stream ended before the job ran');
    if (event.event === 'status' && event.json.status === 'running') break;
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}

let canceled = 0;

/** Milliseconds from sending each cancel to the job's last status; `canceled` counts those that ended canceled. */
async function cancelTimes(server: Server): Promise<number[]> {
  const times: number[] = [];
  canceled = 0;
  for (let i = 0; i < CANCELS; i++) {
    const id = await submit(server, 'key-heavy', heavy());
    const events = await server.call('key-heavy', `/api/v2/jobs/${id}/events`, { headers: { accept: 'text/event-stream' } });
    const sse = new SseReader(events.body!);
    await untilComputing(sse);
    const t0 = performance.now();
    await server.call('key-heavy', `/api/v2/jobs/${id}/cancel`, { method: 'POST' });
    for (;;) {
      const event = await sse.nextEvent(120_000);
      if (!event) throw new Error('the stream ended without a status');
      if (event.event === 'status' && ['canceled', 'succeeded', 'failed'].includes(event.json.status)) {
        // With the engine on the serving thread, the cancel may only be read once the job has finished.
        if (event.json.status === 'canceled') canceled++;
        break;
      }
    }
    times.push(performance.now() - t0);
  }
  return times;
}

interface Figures {
  quiet: number[];
  loaded: number[];
  delayP99: number;
  delayMax: number;
  peakRss: number;
  rssBefore: number;
  heavyStatus: string;
  cancels: number[];
  canceled: number;
  resets: number;
}

async function measure(threads: boolean): Promise<Figures> {
  const server = await start(threads);
  resets = 0;
  try {
    const own = await submit(server, 'key-poller', {
      '1': { class_type: 'PrimitiveString', inputs: { value: 'polled' } },
      '2': { class_type: 'PreviewAny', inputs: { source: ['1', 0] } },
    });
    await until(server, 'key-poller', own, ['succeeded']);
    // Warm: the first job starts a thread and compiles the nodes.
    await until(
      server,
      'key-heavy',
      await submit(server, 'key-heavy', {
        '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 1 } },
        '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'warm' } },
      }),
      ['succeeded'],
    );

    const quietUntil = performance.now() + BASELINE_MS;
    const quiet = await poll(server, own, () => performance.now() > quietUntil);

    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 20);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const heavyId = await submit(server, 'key-heavy', heavy());
    let heavyStatus = 'running';
    const watcher = until(server, 'key-heavy', heavyId, ['succeeded', 'failed', 'canceled']).then((s) => {
      heavyStatus = s;
    });
    await until(server, 'key-heavy', heavyId, ['running', 'succeeded', 'failed']);
    delay.enable();
    const loaded = await poll(server, own, () => heavyStatus !== 'running');
    delay.disable();
    await watcher;
    clearInterval(sampler);
    const cancels = await cancelTimes(server);
    return {
      quiet,
      loaded,
      delayP99: delay.percentile(99) / 1e6,
      delayMax: delay.max / 1e6,
      peakRss,
      rssBefore,
      heavyStatus,
      cancels,
      canceled,
      resets,
    };
  } finally {
    await server.close();
  }
}

const ms = (x: number) => `${x.toFixed(1)} ms`;
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
const mb = (x: number) => `${Math.round(x / MiB)} MiB`;

const threaded = await measure(true);
const inline = await measure(false);

console.log('\nIsolation: one account runs the heaviest default job while another polls GET /api/v2/jobs/{id}\n');
console.log('figure                               worker threads     serving thread (before)   target');
const row = (label: string, a: string, b: string, target: string) => console.log(`${label.padEnd(37)}${a.padEnd(19)}${b.padEnd(26)}${target}`);
row('heavy job ended', threaded.heavyStatus, inline.heavyStatus, '');
row('poller p50, no heavy job', ms(quantile(threaded.quiet, 0.5)), ms(quantile(inline.quiet, 0.5)), '');
row('poller p99, no heavy job', ms(quantile(threaded.quiet, 0.99)), ms(quantile(inline.quiet, 0.99)), '');
row('poller p50, heavy job running', ms(quantile(threaded.loaded, 0.5)), ms(quantile(inline.loaded, 0.5)), '');
row('poller p99, heavy job running', ms(quantile(threaded.loaded, 0.99)), ms(quantile(inline.loaded, 0.99)), '');
const ratio = (f: Figures) => quantile(f.loaded, 0.99) / quantile(f.quiet, 0.99);
row('p99 ratio (running / none)', ratio(threaded).toFixed(2), ratio(inline).toFixed(2), `< 3  ${verdict(ratio(threaded) < 3)}`);
row('requests answered while it ran', String(threaded.loaded.length), String(inline.loaded.length), '');
row('event-loop delay, longest', ms(threaded.delayMax), ms(inline.delayMax), '');
row('connections reset (ECONNRESET)', String(threaded.resets), String(inline.resets), '');
row('event-loop delay p99', ms(threaded.delayP99), ms(inline.delayP99), `< 20 ms  ${verdict(threaded.delayP99 < 20)}`);
const worstCancel = (f: Figures) => Math.max(...f.cancels);
row(
  `cancels that ended canceled`,
  `${threaded.canceled} of ${CANCELS}`,
  `${inline.canceled} of ${CANCELS}`,
  `${CANCELS} of ${CANCELS}  ${verdict(threaded.canceled === CANCELS)}`,
);
row(`cancel -> job's end, median of ${CANCELS}`, ms(quantile(threaded.cancels, 0.5)), ms(quantile(inline.cancels, 0.5)), '');
row(
  `cancel -> job's end, worst of ${CANCELS}`,
  ms(worstCancel(threaded)),
  ms(worstCancel(inline)),
  `< 250 ms  ${verdict(worstCancel(threaded) < 250)}`,
);
const budget = (f: Figures) => f.rssBefore + BUDGET + CACHE;
row('peak RSS', mb(threaded.peakRss), mb(inline.peakRss), '');
row(
  'budget (RSS before + job + cache)',
  mb(budget(threaded)),
  mb(budget(inline)),
  `peak <= budget  ${verdict(threaded.peakRss <= budget(threaded))}`,
);
