// The worker engine's tests run the whole service against fake engine
// workers: one or more fake workers (test/fakes/comfyui-worker.ts, real HTTP
// + WebSocket servers) and a graphrun service whose engine is
// createComfyEngine pointed at them, on SQLite + filesystem blobs behind the
// Node adapter. Timings are short so health checks, cross-checks and
// lost-worker detection happen within a test's time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ComfyEngineOptions, createComfyEngine } from '../../engine/comfyui/engine.ts';
import { defineNode } from '../../engine/local/define-node.ts';
import type { Engine } from '../../engine/types.ts';
import type { ServiceOptions } from '../../index.ts';
import { type FakeWorker, type FakeWorkerOptions, startFakeWorker } from '../fakes/comfyui-worker.ts';
import { type Harness, startHarness } from './harness.ts';
import { until } from './jobs.ts';

/** Engine timings for tests: a lost worker is noticed in about half a second, a hung call in a second or two. */
export const FAST: Partial<ComfyEngineOptions> = {
  healthIntervalMs: 50,
  healthTimeoutMs: 500,
  objectInfoTimeoutMs: 2000,
  submitTimeoutMs: 2000,
  requestTimeoutMs: 1000,
  backoffMaxMs: 200,
  crossCheckMs: 100,
  workerLostAfterMs: 500,
  definitionsWaitMs: 300,
};

/** A node only the test workers have: writes `text` to a .txt output file, listed under `files` as custom nodes do. */
export const saveTextFile = defineNode({
  name: 'SaveTextFile',
  category: 'test',
  output_node: true,
  required: { text: ['STRING', { multiline: true }], filename_prefix: ['STRING', { default: 'notes' }] },
  async run({ text, filename_prefix }, ctx) {
    const name = `${String(filename_prefix)}_00001_.txt`;
    // The fake renames the reference to the file it wrote (its counter moves on as the real server's).
    await ctx.commitOutput({ name, type: 'text', content_type: 'text/plain', body: new TextEncoder().encode(String(text)) });
    return { outputs: [], ui: { files: [{ filename: name, subfolder: '', type: 'output' }] } };
  },
});

export interface EngineLogLine {
  message: string;
  detail?: Record<string, unknown>;
}

export interface WorkerService extends Harness {
  workers: FakeWorker[];
  engine: Engine;
  /** What the engine logged, in order. */
  log: EngineLogLine[];
  /** The engine's client id on a worker (the clientId of its WebSocket there); null while not connected. */
  clientIdOn(worker: FakeWorker): string | null;
  /** Resolves once the engine has a WebSocket open to each of these workers (all by default). */
  connected(workers?: FakeWorker[], timeoutMs?: number): Promise<void>;
  /** Bytes of a file in a worker's folder. */
  workerFile(worker: FakeWorker, folder: 'input' | 'output' | 'temp', name: string): Uint8Array;
}

export interface WorkerServiceOptions {
  /** How many fake workers, or the options of each (default 1). */
  workers?: number | FakeWorkerOptions[];
  /** Engine options over FAST (the worker URLs are filled in). */
  engine?: Partial<ComfyEngineOptions>;
  service?: Partial<ServiceOptions>;
  /** Wait until the engine is connected to every worker before returning (default true). */
  waitConnected?: boolean;
}

export async function startWorkerService(opts: WorkerServiceOptions = {}): Promise<WorkerService> {
  const specs: FakeWorkerOptions[] = Array.isArray(opts.workers) ? opts.workers : Array.from({ length: opts.workers ?? 1 }, () => ({}));
  const workers = await Promise.all(specs.map((s) => startFakeWorker({ ...s, nodes: [saveTextFile, ...(s.nodes ?? [])] })));
  const log: EngineLogLine[] = [];
  const engine = createComfyEngine({
    ...FAST,
    workers: workers.map((w) => w.url),
    log: (message, detail) => void log.push({ message, detail }),
    ...opts.engine,
  });
  let h: Harness;
  try {
    h = await startHarness('node-server', {
      engine,
      // The local account's tier ('default' falls back to free: one job at a time) would hide the pool's parallelism.
      tierLimits: { default: 8, free: 8 },
      maxConcurrentJobs: 8,
      progressIntervalMs: 0,
      ...opts.service,
    });
  } catch (err) {
    await engine.close();
    await Promise.all(workers.map((w) => w.close()));
    throw err;
  }
  const closeHarness = h.close;
  const clientIdOn = (w: FakeWorker) => [...w.sockets.keys()][0] ?? null;
  const service: WorkerService = Object.assign(h, {
    workers,
    engine,
    log,
    clientIdOn,
    connected: (which = workers, timeoutMs = 5000) =>
      until('the engine connected to its workers', () => which.every((w) => clientIdOn(w) !== null), timeoutMs),
    workerFile: (w: FakeWorker, folder: 'input' | 'output' | 'temp', name: string) => new Uint8Array(readFileSync(join(w.files.dir(folder), name))),
    async close() {
      // The service closes its engine; workers go last so nothing is cut under a job that is settling.
      await closeHarness();
      await Promise.all(workers.map((w) => w.close()));
    },
  });
  if (opts.waitConnected !== false) {
    try {
      await service.connected();
    } catch (err) {
      await service.close();
      throw err;
    }
  }
  return service;
}
