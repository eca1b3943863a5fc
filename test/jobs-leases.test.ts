// Runners sharing one PostgreSQL database (test/helpers/postgres.ts starts
// it): an account's tier limit holds across them, and a job whose runner
// stops renewing its lease is taken back by another runner once the lease
// expires (run again, or failed per interruptedJobs), while the first one,
// fenced out, writes nothing more about it.
import { afterEach, describe, expect, it } from 'vitest';
import { defineNode } from '../engine/local/define-node.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Service, type ServiceOptions, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { BlobStore, MetadataStore } from '../storage/types.ts';
import { until } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';

const server = usePostgres();

/** Gates the test opens by key; a node waits on its key's gate, then saves which runner ran it. */
function createGates() {
  const waiting = new Map<string, () => void>();
  const opened = new Set<string>();
  let now = 0;
  let most = 0;
  const started: string[] = [];
  const gateNode = (runner: string) =>
    defineNode({
      name: 'Gate',
      category: 'test',
      cacheable: false,
      output_node: true,
      required: { key: ['STRING', {}] },
      async run({ key }, ctx) {
        most = Math.max(most, ++now);
        started.push(`${runner}:${key}`);
        try {
          if (!opened.has(key as string)) await new Promise<void>((resolve) => waiting.set(`${runner}:${key}`, resolve));
        } finally {
          now--;
        }
        await ctx.commitOutput({ name: 'by.txt', type: 'text', content_type: 'text/plain', body: new TextEncoder().encode(runner) });
        return { outputs: [] };
      },
    });
  return {
    gateNode,
    /** Lets the node of this key go on, wherever it waits now or will run. */
    open(key: string) {
      opened.add(key);
      for (const [k, resolve] of waiting) if (k.endsWith(`:${key}`)) resolve();
    },
    /** Lets only this runner's node of this key go on. */
    openOn(runner: string, key: string) {
      waiting.get(`${runner}:${key}`)?.();
    },
    started,
    mostAtOnce: () => most,
  };
}

const services: Service[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

type Gates = ReturnType<typeof createGates>;
async function runner(
  name: string,
  connectionString: string,
  blobs: BlobStore,
  gates: Gates,
  options: Partial<ServiceOptions> = {},
  wrap: (m: MetadataStore) => MetadataStore = (m) => m,
): Promise<Service> {
  const storage = await createPostgresStorage({ connectionString, blobs });
  const service = await createService({
    storage: { ...storage, metadata: wrap(storage.metadata) },
    engine: createLocalEngine({ nodes: [...builtinNodes, gates.gateNode(name)] }),
    logger: silentLogger,
    sweepIntervalMs: 0,
    ...options,
  });
  services.push(service);
  return service;
}

const call = (service: Service, path: string, init?: RequestInit) => service.fetch(new Request(`http://graphrun.test${path}`, init));
async function submit(service: Service, key: string): Promise<string> {
  const res = await call(service, '/api/v2/jobs', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: { g: { class_type: 'Gate', inputs: { key } } } }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}
const jobOf = async (service: Service, id: string) => (await (await call(service, `/api/v2/jobs/${id}`)).json()) as any;
const textOf = async (service: Service, url: string) => (await call(service, url.slice(url.indexOf('/api/v2/')))).text();

describe('runners sharing a PostgreSQL database', () => {
  it("an account's tier limit holds across runners; every job runs once", async () => {
    const url = await server.newDatabase();
    const blobs = createMemoryBlobStore();
    const gates = createGates();
    const tierLimits = { default: 2 };
    const a = await runner('a', url, blobs, gates, { tierLimits });
    const b = await runner('b', url, blobs, gates, { tierLimits });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await submit(i % 2 ? a : b, `k${i}`));
    // Two start (the limit); each one opened lets exactly one more start, on either runner.
    await until('two jobs run', () => gates.started.length === 2, 20_000);
    for (let i = 0; i < 6; i++) {
      const key = gates.started[i].split(':')[1];
      gates.open(key);
      if (i + 2 < 6) await until(`job ${i + 3} starts`, () => gates.started.length === i + 3, 20_000);
    }
    for (const id of ids) await until(`${id} succeeds`, async () => (await jobOf(a, id)).status === 'succeeded', 20_000);
    expect(gates.mostAtOnce()).toBe(2);
    expect(gates.started).toHaveLength(6);
    for (const id of ids) expect((await jobOf(b, id)).outputs).toHaveLength(1);
  });

  it.each(['rerun', 'fail'] as const)(
    'a runner that stops renewing loses the job to another once its lease expires (interruptedJobs %s); it writes nothing more',
    async (policy) => {
      const url = await server.newDatabase();
      const blobs = createMemoryBlobStore();
      const gates = createGates();
      let frozen = false;
      // Runner a's renewals stop answering, as a stalled or dead process's would; its engine goes on.
      const freeze = (m: MetadataStore): MetadataStore => ({
        ...m,
        renewLease: (...args) => (frozen ? new Promise<never>(() => {}) : m.renewLease(...args)),
      });
      const options = { jobLeaseSeconds: 3, interruptedJobs: policy, maxConcurrentJobs: 1 };
      const warnings: string[] = [];
      const logger = { ...silentLogger, warn: (message: string) => warnings.push(message) };
      const a = await runner('a', url, blobs, gates, { ...options, logger }, freeze);
      const id = await submit(a, 'stuck');
      await until('a runs the job', () => gates.started.includes('a:stuck'), 20_000);
      frozen = true;
      const b = await runner('b', url, blobs, gates, options);
      if (policy === 'rerun') {
        await until('b runs the job again', () => gates.started.includes('b:stuck'), 30_000);
        gates.openOn('b', 'stuck');
        await until('the job succeeds', async () => (await jobOf(b, id)).status === 'succeeded', 20_000);
      } else {
        await until('the job fails', async () => (await jobOf(b, id)).status === 'failed', 30_000);
      }
      // Now a's run ends: fenced out, it adds no output and changes nothing.
      gates.openOn('a', 'stuck');
      const before = await jobOf(b, id);
      await until('a ends its run', () => warnings.some((w) => w.startsWith('job lease lost')), 20_000);
      const job = await jobOf(b, id);
      expect(job).toEqual(before);
      if (policy === 'rerun') {
        expect(job.outputs).toHaveLength(1);
        expect(await textOf(b, job.outputs[0].url)).toBe('b');
        expect(job.error).toBeNull();
      } else {
        expect(job.outputs).toEqual([]);
        expect(job.error.code).toBe('job_interrupted');
      }
      expect(gates.started.filter((s) => s === 'b:stuck')).toHaveLength(policy === 'rerun' ? 1 : 0);
    },
  );
});
