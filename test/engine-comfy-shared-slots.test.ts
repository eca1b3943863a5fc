// Worker slots shared through the database: two runners (two services, each
// with its own worker engine) on one PostgreSQL database
// (test/helpers/postgres.ts) and the same fake workers. A worker never gets
// a second prompt from them while it has one, and a job that one runner
// stopped and another runs again goes to the worker that holds its prompt,
// where it follows that prompt instead of submitting it anew.
import { afterEach, describe, expect, it } from 'vitest';
import { type ComfyEngineOptions, createComfyEngine } from '../engine/comfyui/engine.ts';
import { defineNode } from '../engine/local/define-node.ts';
import { createService, type Service, type ServiceOptions, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { BlobStore, MetadataStore } from '../storage/types.ts';
import { type FakeWorker, startFakeWorker } from './fakes/comfyui-worker.ts';
import { until } from './helpers/jobs.ts';
import { waitWorkflow } from './helpers/local-nodes.ts';
import { usePostgres } from './helpers/postgres.ts';
import { FAST } from './helpers/worker-service.ts';

const server = usePostgres();

let open = () => {};
let opened = Promise.resolve();
const closeGate = () => {
  opened = new Promise<void>((r) => (open = r));
};
/** An output node that returns once the test opens its gate: its prompt stays running on the worker meanwhile. */
const gate = defineNode({
  name: 'GateShow',
  category: 'test',
  output_node: true,
  required: { value: ['INT', {}] },
  async run({ value }) {
    await opened;
    return { outputs: [], ui: { text: [String(value)] } };
  },
});

const services: Service[] = [];
const workers: FakeWorker[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  await Promise.all(workers.splice(0).map((w) => w.close()));
});

async function startWorkers(n: number): Promise<FakeWorker[]> {
  const started = await Promise.all(Array.from({ length: n }, () => startFakeWorker({ nodes: [gate] })));
  workers.push(...started);
  return started;
}

interface RunnerOptions {
  engine?: Partial<ComfyEngineOptions>;
  service?: Partial<ServiceOptions>;
  wrap?: (m: MetadataStore) => MetadataStore;
}

/** A runner on the database whose engine uses these workers, in this order, and the database's worker slots. */
async function runner(url: string, blobs: BlobStore, on: FakeWorker[], opts: RunnerOptions = {}): Promise<Service> {
  const storage = await createPostgresStorage({ connectionString: url, blobs });
  const slots = storage.metadata.workerSlots;
  const service = await createService({
    storage: { ...storage, metadata: opts.wrap ? opts.wrap(storage.metadata) : storage.metadata },
    engine: createComfyEngine({ ...FAST, workers: on.map((w) => w.url), slots, slotRetryMs: 50, ...opts.engine }),
    logger: silentLogger,
    sweepIntervalMs: 0,
    progressIntervalMs: 0,
    tierLimits: { default: 8, free: 8 },
    // One job at a time per runner: each runner holds one, so both want the worker at once.
    maxConcurrentJobs: 1,
    ...opts.service,
  });
  services.push(service);
  return service;
}

const call = (service: Service, path: string, init?: RequestInit) => service.fetch(new Request(`http://graphrun.test${path}`, init));
async function submit(service: Service, workflow: Record<string, unknown>): Promise<string> {
  const res = await call(service, '/api/v2/jobs', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}
const jobOf = async (service: Service, id: string) => (await (await call(service, `/api/v2/jobs/${id}`)).json()) as any;
const ran = (w: FakeWorker) => w.submissions.map((x) => x.prompt_id);

describe('runners sharing the workers through the database', () => {
  it('two runners on one worker: it never has two of their prompts at once, and every job succeeds', async () => {
    const url = await server.newDatabase();
    const blobs = createMemoryBlobStore();
    const [w] = await startWorkers(1);
    // At each prompt the worker accepts, whether it already had one queued or running (it must not).
    const overlaps: string[] = [];
    const push = w.submissions.push.bind(w.submissions);
    w.submissions.push = (...items) => {
      if (w.queue.remaining() > 0) overlaps.push(items[0].prompt_id);
      return push(...items);
    };
    const a = await runner(url, blobs, [w]);
    const b = await runner(url, blobs, [w]);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await submit(i % 2 ? a : b, waitWorkflow(i, 30, 3)));
    for (const id of ids) await until(`${id} succeeds`, async () => (await jobOf(a, id)).status === 'succeeded', 20_000);

    expect(overlaps).toEqual([]);
    expect(ran(w).sort()).toEqual([...ids].sort());
    // Both engines gave the worker prompts (each submits under its own client id).
    expect(new Set(w.submissions.map((x) => x.body.client_id)).size).toBe(2);
  });

  it.each(['stopped', 'stalled'] as const)(
    'a job run again on another runner (the first one %s) goes to the worker that holds its prompt and follows it there',
    async (how) => {
      const url = await server.newDatabase();
      const blobs = createMemoryBlobStore();
      const [w1, w2] = await startWorkers(2);
      closeGate();
      let frozen = false;
      // A stalled runner's lease renewals stop answering, as a dead process's would; its engine goes on.
      const freeze = (m: MetadataStore): MetadataStore => ({
        ...m,
        renewLease: (...args) => (frozen ? new Promise<never>(() => {}) : m.renewLease(...args)),
      });
      const service = { jobLeaseSeconds: 3 };
      // Each engine breaks ties by its order of workers: the first runner's choice is w2, the second's would be w1.
      const first = await runner(url, blobs, [w2, w1], { service, wrap: freeze });
      const id = await submit(first, { g: { class_type: 'GateShow', inputs: { value: how === 'stopped' ? 7 : 8 } } });
      await until('the prompt running on w2', () => w2.queue.running?.item[1] === id, 10_000);
      const { started_at } = await jobOf(first, id);
      // Stopped: the job goes back to the queue at once. Stalled: another runner takes it back once its lease expires.
      if (how === 'stopped') await services.splice(services.indexOf(first), 1)[0].close();
      else frozen = true;
      const second = await runner(url, blobs, [w1, w2], { service });
      await until(
        'the job running again',
        async () => {
          const job = await jobOf(second, id);
          return job.status === 'running' && job.started_at !== started_at;
        },
        20_000,
      );
      open();
      await until('the job succeeds', async () => (await jobOf(second, id)).status === 'succeeded', 10_000);

      expect(ran(w1)).toEqual([]);
      expect(ran(w2)).toEqual([id]);
    },
  );
});
