// For the /ops/servers tests: fake engine servers whose FakeGenerate waits at
// a gate the test holds (one gate per server), and graphrun services whose
// worker engine starts with none of them (or the `configured` ones), so the
// operator API is what brings them in. Several services may share one set of
// fake servers (a restart, two runners on one database).
import { type ComfyEngine, createComfyEngine } from '../../engine/comfyui/engine.ts';
import type { ServiceOptions } from '../../index.ts';
import { createModelNodes, type ModelNodes, modelWorkflow } from '../fakes/comfyui-model-nodes.ts';
import { type FakeWorker, startFakeWorker } from '../fakes/comfyui-worker.ts';
import { type Harness, type Mode, type OpenStorage, startHarness } from './harness.ts';
import { FAST } from './worker-service.ts';

export const OPERATOR = 'op-secret';

export interface FakePool {
  workers: FakeWorker[];
  gates: ModelNodes[];
  /** Which fake server runs the job now, if any. */
  runningOn(jobId: string): FakeWorker | undefined;
  /** Prompt ids each server was sent. */
  ran(w: FakeWorker): string[];
  close(): Promise<void>;
}

export async function startFakePool(n = 2): Promise<FakePool> {
  const gates = Array.from({ length: n }, () => createModelNodes({ checkpoints: ['a.safetensors'] }));
  const workers = await Promise.all(gates.map((g) => startFakeWorker({ nodes: g.nodes })));
  return {
    workers,
    gates,
    runningOn: (id) => workers.find((w) => w.queue.running?.item[1] === id),
    ran: (w) => w.submissions.map((x) => x.prompt_id),
    async close() {
      for (const g of gates) g.open();
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

/** A job for the pool's servers (FakeGenerate waits at the gate of the server that runs it). */
export const poolJob = (seed: number) => modelWorkflow('a.safetensors', seed);

export interface PoolService extends Harness {
  engine: ComfyEngine;
  /** A request with the operator token (`token` overrides it; null sends none). */
  ops(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
}

export interface PoolServiceOptions {
  /** URLs the engine is configured with (as --worker). */
  configured?: string[];
  service?: Partial<ServiceOptions>;
  openStorage?: OpenStorage;
}

export async function startPoolService(mode: Mode, opts: PoolServiceOptions = {}): Promise<PoolService> {
  // A bound of 0: every job loads the same checkpoint and must not wait for a busy holder of it.
  const engine = createComfyEngine({ ...FAST, affinityWaitMs: 0, workers: opts.configured ?? [] });
  const h = await startHarness(
    mode,
    { engine, operatorToken: OPERATOR, tierLimits: { default: 8, free: 8 }, maxConcurrentJobs: 8, progressIntervalMs: 0, ...opts.service },
    opts.openStorage,
  );
  return Object.assign(h, {
    engine,
    ops(path: string, { token = OPERATOR, headers, ...init }: RequestInit & { token?: string | null } = {}) {
      const auth: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
      return h.fetch(path, { ...init, headers: { ...auth, ...(headers as Record<string, string>) } });
    },
  });
}

/** POST /ops/servers with a JSON body. */
export const addBody = (url: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ url }),
});
