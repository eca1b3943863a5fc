// Queue bounds and Idempotency-Keys with two API instances on one PostgreSQL
// database: submissions racing through both never queue more jobs than
// maxQueueDepth and maxQueuedPerAccount allow, since the insert counts the
// queue again as one step for every instance (admit's early count alone
// could be stale by then); a refusal by the insert answers as admit's does;
// and of requests with one Idempotency-Key through both, exactly one is taken.
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, type Service, type ServiceOptions, silentLogger } from '../index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage } from '../storage/sql/postgres.ts';
import type { MetadataStore, NewJob, QueueBounds, Storage } from '../storage/types.ts';
import { createTestNodes, sumWorkflow } from './helpers/local-nodes.ts';
import { usePostgres } from './helpers/postgres.ts';

const server = usePostgres();
const BASE = 'http://graphrun.test';
const ACCOUNTS = ['alice', 'bob', 'carol'].map((id) => ({ id, tier: 'free', apiKeys: [`key-${id}`] }));

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** An API-only instance on the database (the jobs stay queued), its storage passed through `wrap`. */
async function startApi(connectionString: string, options: Partial<ServiceOptions>, wrap = (s: Storage) => s): Promise<Service> {
  const storage = await createPostgresStorage({ connectionString, blobs: createMemoryBlobStore() });
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });
  const service = await createService({ storage: wrap(storage), engine, runJobs: false, logger: silentLogger, sweepIntervalMs: 0, ...options });
  closing.push(() => service.close());
  return service;
}

/** The storage, its job inserts held at a gate until the test opens it; `arrived(n)` resolves once n wait there. */
function gatedInserts() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let count = 0;
  const wrap = (storage: Storage): Storage => {
    const inner = storage.metadata;
    const createJob = async (job: NewJob, bounds?: QueueBounds) => {
      count++;
      for (const w of waiters.filter((w) => count >= w.n)) w.resolve();
      await opened;
      return bounds ? inner.createJob(job, bounds) : inner.createJob(job);
    };
    return { ...storage, metadata: { ...inner, createJob: createJob as MetadataStore['createJob'] } };
  };
  const arrived = (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : waiters.push({ n, resolve })));
  return { wrap, open, arrived };
}

async function submit(service: Service, account: string, n: number, headers: Record<string, string> = {}) {
  const res = await service.fetch(
    new Request(`${BASE}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer key-${account}`, ...headers },
      body: JSON.stringify({ workflow: sumWorkflow(`n${n}_`) }),
    }),
  );
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

describe('two API instances on one PostgreSQL database', () => {
  it("submissions admitted on one instance while the other fills the account's share are refused by the insert, as admit refuses", async () => {
    const url = await server.newDatabase();
    const options = { accounts: ACCOUNTS, maxQueuedPerAccount: 2 };
    const gate = gatedInserts();
    const x = await startApi(url, options, gate.wrap);
    const y = await startApi(url, options);
    // Both pass admit on x (nothing queued yet), then wait to insert.
    const late = [submit(x, 'alice', 1), submit(x, 'alice', 2)];
    await gate.arrived(2);
    expect((await submit(y, 'alice', 3)).status).toBe(201);
    expect((await submit(y, 'alice', 4)).status).toBe(201);
    const byAdmit = await submit(y, 'alice', 5);
    gate.open();
    const byInsert = await Promise.all(late);
    expect(byAdmit).toMatchObject({ status: 429, retryAfter: '10', body: { error: { code: 'queue_full', details: { queued: 2, limit: 2 } } } });
    expect(byInsert).toEqual([byAdmit, byAdmit]);
    expect((await submit(x, 'bob', 6)).status).toBe(201);
  });

  it('concurrent submissions through both never queue more than maxQueueDepth; every other one gets the full-queue answer', async () => {
    const url = await server.newDatabase();
    const options = { accounts: ACCOUNTS, maxQueueDepth: 5 };
    const [x, y] = [await startApi(url, options), await startApi(url, options)];
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => submit(i % 2 ? x : y, ACCOUNTS[i % 3].id, i)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(19);
    for (const a of refused) {
      expect(a).toEqual({
        status: 429,
        retryAfter: '10',
        body: { error: { code: 'queue_full', message: 'The job queue is full. Retry later.' } },
      });
    }
  });

  it('of concurrent submissions with one Idempotency-Key through both, exactly one is queued', async () => {
    const url = await server.newDatabase();
    const [x, y] = [await startApi(url, { accounts: ACCOUNTS }), await startApi(url, { accounts: ACCOUNTS })];
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(i % 2 ? x : y, 'alice', i, { 'idempotency-key': 'once' })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((a) => a.status !== 201))
      expect(a).toMatchObject({ status: 422, body: { error: { code: 'idempotency_key_reuse' } } });
  });
});
