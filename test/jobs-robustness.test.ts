// The jobs API when things go wrong around it: storage writes that fail,
// instances that only serve the API, retention running out while queued,
// credentials that must not linger, hostile nesting, outputs and retention.
import { afterEach, describe, expect, it } from 'vitest';
import { buildContext } from '../core/context.ts';
import { cancelJob as cancelHandler } from '../core/jobs/read.ts';
import { submitJob } from '../core/jobs/submit.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import type { Engine } from '../engine/types.ts';
import { createService, type Service, type ServiceOptions, silentLogger } from '../index.ts';
import { createLocalMusicProvider } from '../providers/local/music/provider.ts';
import { createLocalVideoProvider } from '../providers/local/video/provider.ts';
import { createMemoryStorage } from '../storage/memory/index.ts';
import type { MetadataStore, Storage } from '../storage/types.ts';
import { testClock } from './helpers/assets.ts';
import { type Harness, uploadForm } from './helpers/harness.ts';
import { getJob, type JobsHarness, saveImageWorkflow, sleep, startJobs, submit, submitOk, until, waitForJob } from './helpers/jobs.ts';
import { createTestNodes, sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';
import { eventsOf, openEvents } from './helpers/sse-client.ts';

const testEngine = () => createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes] });

/** An in-process service over the given storage, wrapped so the jobs helpers can drive it. */
async function svc(storage: Storage, options: Partial<ServiceOptions> = {}): Promise<Harness & { service: Service }> {
  const service = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, engine: testEngine(), ...options });
  const base = 'http://graphrun.test';
  return {
    mode: 'in-process',
    service,
    base,
    dir: '',
    fetch: (p: string, init?: RequestInit) =>
      service.fetch(new Request(/^https?:/.test(p) ? p : base + p, { ...init, duplex: 'half' } as RequestInit)),
    blobFiles: async () => ({ blobs: [], temp: [] }),
    close: () => service.close(),
  };
}

const toClose: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of toClose.splice(0).reverse()) await c.close().catch(() => undefined);
});

/** Memory storage whose first write of a `succeeded` status throws, as a locked database would. */
function failingFirstSuccessWrite() {
  const storage = createMemoryStorage();
  const base = storage.metadata;
  let failed = false;
  const metadata: MetadataStore = {
    ...base,
    async transitionJob(id, from, to, patch) {
      if (to === 'succeeded' && !failed) {
        failed = true;
        throw new Error('SQLITE_BUSY: database is locked');
      }
      return base.transitionJob(id, from, to, patch);
    },
  };
  return { storage, metadata, failedOnce: () => failed };
}

describe('v2 jobs: robustness', () => {
  it("a failing terminal write is retried: the job ends and the account's next job runs", async () => {
    // One transient storage error on the final compare-and-set of a run.
    const { storage, metadata } = failingFirstSuccessWrite();
    const h = await svc({ metadata, blobs: storage.blobs });
    toClose.push(h);
    const a = await submitOk(h, sumWorkflow('a', 1, 2));
    const b = await submitOk(h, sumWorkflow('b', 3, 4)); // free tier: one at a time
    await sleep(3_000);
    const jobA = (await getJob(h, a.id)).body;
    const jobB = (await getJob(h, b.id)).body;
    // Expected: A reaches a terminal status (retry the write, or fail it), and B runs.
    expect({ a: jobA.status, b: jobB.status }).toEqual({ a: 'succeeded', b: 'succeeded' });
  }, 10_000);

  it('a finished job whose terminal write failed once is not run again by the next start', async () => {
    const { storage, metadata, failedOnce } = failingFirstSuccessWrite();
    const executions: string[] = [];
    const counting = (): Engine => {
      const e = testEngine();
      return { ...e, execute: (job, ctx) => (executions.push(job.id), e.execute(job, ctx)) };
    };
    const first = await svc({ metadata, blobs: storage.blobs }, { engine: counting() });
    const a = await submitOk(first, sumWorkflow('a', 1, 2));
    await until('the run ended', () => executions.length === 1 && failedOnce());
    await sleep(300);
    await first.close();
    const second = await svc(storage, { engine: counting() });
    toClose.push(second);
    await waitForJob(second, a.id, 'succeeded');
    // The engine finished this job once already; only the row write failed.
    expect(executions).toEqual([a.id]);
  }, 10_000);

  it('an API-only instance refuses extra_data it could not forward; without it the job runs on the worker', async () => {
    const storage = createMemoryStorage();
    const seen: unknown[] = [];
    const recording = (): Engine => {
      const e = testEngine();
      return { ...e, execute: (job, ctx) => (seen.push(job.extra_data), e.execute(job, ctx)) };
    };
    const api = await svc(storage, { runJobs: false, engine: recording() });
    const worker = await svc(storage, { runJobs: true, engine: recording() });
    toClose.push(api, worker);
    const refused = await submit(api, { workflow: sumWorkflow('x'), extra_data: { api_key_platform_org: 'partner-key' } });
    expect(refused.res.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'extra_data' } });
    const { res, body } = await submit(api, { workflow: sumWorkflow('x') });
    expect(res.status).toBe(201);
    await waitForJob(worker, body.id, 'succeeded');
    expect(seen).toEqual([undefined]);
  });

  it('the extra_data (a credential) of a job canceled while queued is dropped at once', async () => {
    // The service context built as createService builds it, to look at ctx.jobs.extraData.
    const storage = createMemoryStorage();
    const { metadata } = storage;
    const ctx = await buildContext({
      storage,
      logger: silentLogger,
      engine: testEngine(),
      providers: { music: createLocalMusicProvider(), video: createLocalVideoProvider({ policy: { allowPrivate: false } }) },
    });
    await ctx.jobs.start();
    toClose.push(ctx.jobs);
    const post = (body: unknown) =>
      submitJob(
        new Request('http://x/api/v2/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
        ctx,
      ).then((r) => r.json() as Promise<any>);
    const running = await post({ workflow: waitWorkflow(1, 20, 10) });
    const queued = await post({ workflow: sumWorkflow('q'), extra_data: { api_key_comfy_org: 'secret-partner-key' } });
    expect(queued.status).toBe('queued');
    const canceled = (await (await cancelHandler(new Request('http://x', { method: 'POST' }), ctx, queued.id)).json()) as any;
    expect(canceled.status).toBe('canceled');
    await until('first job done', async () => (await metadata.getJobById(running.id))?.status === 'succeeded');
    expect(ctx.jobs.extraData.has(queued.id)).toBe(false);
  });

  it('a job still queued when its retention ends stays visible, and the sweep fails it without running it', async () => {
    const storage = createMemoryStorage();
    const clock = testClock(Date.now());
    const h = await svc(storage, { now: clock.now, jobRetentionSeconds: 60 });
    toClose.push(h);
    const first = await submitOk(h, waitWorkflow(1, 30, 10));
    await waitForJob(h, first.id, 'running');
    const late = await submitOk(h, sumWorkflow('late'));
    expect(late.status).toBe('queued');
    clock.advance(61_000);
    // Not finished, so still the owner's to see and cancel.
    expect((await getJob(h, late.id)).body.status).toBe('queued');
    const swept = await h.service.sweep();
    // Failed as job_expired, and being past its deadline, expired by the same pass.
    expect(swept.jobs_expired).toBe(1);
    const row = await storage.metadata.getJobById(late.id);
    expect({ status: row?.status, started: row?.started_at !== null, code: row?.error?.code }).toEqual({
      status: 'expired',
      started: false,
      code: 'job_expired',
    });
    expect((await getJob(h, late.id)).res.status).toBe(404);
    // The running one finishes, already past its deadline: the next pass expires it.
    await until('first job done', async () => (await storage.metadata.getJobById(first.id))?.status === 'succeeded');
    expect((await h.service.sweep()).jobs_expired).toBe(1);
    expect((await storage.metadata.getJobById(late.id))?.started_at).toBeNull();
  });

  it('a job output expires with its job even when a non-expiring upload holds the same bytes', async () => {
    const h: JobsHarness = await startJobs('in-process');
    toClose.push(h);
    const one = await submitOk(h, saveImageWorkflow(0x123456));
    const done1 = await waitForJob(h, one.id, 'succeeded');
    const bytes = new Uint8Array(await (await h.fetch(done1.outputs[0].url)).arrayBuffer());
    const up = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(bytes, { content_type: 'image/png' }, 'mine.png') });
    expect(up.status).toBeLessThan(300);
    const two = await submitOk(h, saveImageWorkflow(0x123456));
    const done2 = await waitForJob(h, two.id, 'succeeded');
    expect(done2.outputs[0].hash).toBe(done1.outputs[0].hash);
    const asset = (await (await h.fetch(`/api/v2/assets/${done2.outputs[0].id}`)).json()) as any;
    expect(asset.expires_at).toBe(done2.expires_at);
  });

  it('SSE on an API-only instance relays the progress another instance saves', async () => {
    const storage = createMemoryStorage();
    const api = await svc(storage, { runJobs: false, progressIntervalMs: 50 });
    const worker = await svc(storage, { runJobs: true, progressIntervalMs: 50 });
    toClose.push(api, worker);
    const job = await submitOk(api, waitWorkflow(1, 100, 30));
    const { res, sse } = await openEvents(api, job.id);
    expect(res.status).toBe(200);
    const items = eventsOf(await sse!.readToEnd(10_000));
    expect(items.at(-1)?.json.status).toBe('succeeded');
    // 30 steps over ~3 s; the row is read once a second, so at least two distinct snapshots arrive.
    expect(items.filter((e) => e.event === 'progress').length).toBeGreaterThanOrEqual(2);
  }, 15_000);

  it('a deeply nested constant in the workflow is a 422, not a 500', async () => {
    const h: JobsHarness = await startJobs('in-process');
    toClose.push(h);
    const depth = 100_000;
    const deep = '['.repeat(depth) + ']'.repeat(depth);
    const body = `{"workflow":{"s":{"class_type":"ShowAny","inputs":{"value":{"__value__":${deep}}}}}}`;
    const { res, body: answer } = await submit(h, body);
    expect(res.status).toBe(422);
    expect(answer.error).toMatchObject({ code: 'invalid_workflow', details: { field: 'workflow', reason: 'too deeply nested' } });
  });
});
