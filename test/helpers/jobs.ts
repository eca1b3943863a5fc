// Shared helpers of the v2 jobs HTTP tests: a harness whose engine knows the
// test nodes, submission and polling, per-account request headers, and the
// assertions of the contract's Job and Output shapes.
import { expect } from 'vitest';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import type { Workflow } from '../../engine/types.ts';
import type { ServiceOptions } from '../../index.ts';
import { ISO, UUID } from './assets.ts';
import { type Harness, type Mode, startHarness } from './harness.ts';
import { createTestNodes } from './local-nodes.ts';

export const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];

/** The keys of the contract's Job and this service's additions (metadata, outputs_reused, priority), every one always present. */
export const JOB_FIELDS = [
  'completed_at',
  'created_at',
  'error',
  'expires_at',
  'id',
  'metadata',
  'metrics',
  'outputs',
  'outputs_reused',
  'priority',
  'progress',
  'queue_position',
  'started_at',
  'status',
  'urls',
];
export const PROGRESS_FIELDS = ['current_node', 'current_node_class', 'message', 'nodes_done', 'nodes_total', 'step', 'steps', 'value'];
export const OUTPUT_FIELDS = ['content_type', 'hash', 'id', 'job_id', 'name', 'node_id', 'size_bytes', 'type', 'url', 'url_expires_at'];
export const JOB_ERROR_FIELDS = ['class_type', 'code', 'exception_type', 'message', 'node_id', 'traceback'];

export interface JobsHarness extends Harness {
  /** run() calls per test node class (Number, Add, Show, Wait, Fail, ...) in this harness's engine. */
  runs: Record<string, number>;
}

/** A harness whose engine runs the built-in nodes plus the test nodes of local-nodes.ts. */
export async function startJobs(mode: Mode, options: Partial<ServiceOptions> = {}): Promise<JobsHarness> {
  const test = createTestNodes();
  const engine = createLocalEngine({ nodes: [...builtinNodes, ...test.nodes] });
  const h = await startHarness(mode, { engine, ...options });
  return Object.assign(h, { runs: test.runs });
}

/** The same harness, every request carrying these headers (e.g. an account's key). */
export function withHeaders<H extends Harness>(h: H, headers: Record<string, string>): H {
  return {
    ...h,
    fetch(pathOrUrl: string, init: RequestInit = {}) {
      return h.fetch(pathOrUrl, { ...init, headers: { ...headers, ...Object.fromEntries(new Headers(init.headers).entries()) } });
    },
  };
}

/** Two accounts of the free tier: alice (key 'ka') and bob (key 'kb'). */
export const ALICE_AND_BOB = [
  { id: 'alice', tier: 'free', apiKeys: ['ka'] },
  { id: 'bob', tier: 'free', apiKeys: ['kb'] },
];

/** Requests as the account holding this API key. */
export const asKey = <H extends Harness>(h: H, key: string): H => withHeaders(h, { authorization: `Bearer ${key}` });

export interface Result {
  res: Response;
  /** Parsed JSON, or the text when it is not JSON. */
  body: any;
}

async function read(res: Response): Promise<Result> {
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { res, body };
}

/**
 * POST /api/v2/jobs. An object body is sent as JSON (`{ workflow }` is NOT
 * added: pass the whole request body); a string is sent as is. Content-Type
 * is application/json unless `init.headers` says otherwise.
 */
export async function submit(h: Harness, body: unknown, init: RequestInit = {}): Promise<Result> {
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  const payload = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  const res = await h.fetch('/api/v2/jobs', { method: 'POST', ...init, headers, body: payload as RequestInit['body'] });
  return read(res);
}

/** Submits `{ workflow }`, expects 201, returns the Job. */
export async function submitOk(h: Harness, workflow: Workflow | Record<string, unknown>, init: RequestInit = {}): Promise<any> {
  const { res, body } = await submit(h, { workflow }, init);
  expect({ status: res.status, body }).toMatchObject({ status: 201 });
  return body;
}

export async function getJob(h: Harness, id: string): Promise<Result> {
  return read(await h.fetch(`/api/v2/jobs/${id}`));
}

export async function getWorkflow(h: Harness, id: string): Promise<Result> {
  return read(await h.fetch(`/api/v2/jobs/${id}/workflow`));
}

export async function cancelJob(h: Harness, id: string, init: RequestInit = {}): Promise<Result> {
  return read(await h.fetch(`/api/v2/jobs/${id}/cancel`, { method: 'POST', ...init }));
}

/** The Job now; fails unless GET answers 200. */
export async function jobNow(h: Harness, id: string): Promise<any> {
  const { res, body } = await getJob(h, id);
  expect({ status: res.status, body }).toMatchObject({ status: 200 });
  return body;
}

/** Polls GET /api/v2/jobs/{id} until its status is one of `statuses`; fails after `timeoutMs` with the last Job seen. */
export async function waitForJob(h: Harness, id: string, statuses: string | string[], timeoutMs = 5_000): Promise<any> {
  const wanted = Array.isArray(statuses) ? statuses : [statuses];
  const deadline = Date.now() + timeoutMs;
  let last: any;
  for (;;) {
    last = await jobNow(h, id);
    if (wanted.includes(last.status)) return last;
    if (TERMINAL.includes(last.status)) {
      throw new Error(`job ${id} ended ${last.status} while waiting for ${wanted.join('|')}: ${JSON.stringify(last)}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`job ${id} not ${wanted.join('|')} within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
    }
    await sleep(10);
  }
}

/** Submits `{ workflow, extra_data }` (no extra_data when `extra` is undefined), expects 201 and polls the Job until it ends. */
export async function runJob(
  h: Harness,
  workflow: Workflow | Record<string, unknown>,
  extra?: Record<string, unknown>,
  timeoutMs = 10_000,
): Promise<any> {
  const { res, body } = await submit(h, extra ? { workflow, extra_data: extra } : { workflow });
  expect(res.status, JSON.stringify(body)).toBe(201);
  return waitForJob(h, body.id, ['succeeded', 'failed', 'canceled'], timeoutMs);
}

/** Polls until `check` holds; fails with `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const isIso = (v: unknown) => typeof v === 'string' && ISO.test(v);
const intOrNull = (v: unknown) => v === null || Number.isInteger(v);

/** Asserts every field of the contract's Job and the type of each; returns the job. */
export function expectJobShape(job: any, prefix = ''): any {
  expect(Object.keys(job).sort()).toEqual(JOB_FIELDS);
  expect(job.id).toMatch(UUID);
  expect(['queued', 'running', 'succeeded', 'canceling', 'canceled', 'failed', 'expired']).toContain(job.status);
  expect(job.created_at).toMatch(ISO);
  expect(job.expires_at).toMatch(ISO);
  expect(job.started_at === null || isIso(job.started_at)).toBe(true);
  expect(job.completed_at === null || isIso(job.completed_at)).toBe(true);
  expect(intOrNull(job.queue_position)).toBe(true);
  if (job.status === 'queued') expect(Number.isInteger(job.queue_position) && job.queue_position >= 0).toBe(true);
  else expect(job.queue_position).toBeNull();
  if (job.progress !== null) expectProgressShape(job.progress);
  expect(Array.isArray(job.outputs)).toBe(true);
  for (const o of job.outputs) expectOutputShape(o, job.id);
  if (job.error !== null) {
    expect(Object.keys(job.error).sort()).toEqual(JOB_ERROR_FIELDS);
    expect(typeof job.error.code).toBe('string');
    expect(typeof job.error.message).toBe('string');
  }
  expect(Object.keys(job.metrics).sort()).toEqual(['execution_ms', 'queue_ms']);
  expect(intOrNull(job.metrics.queue_ms)).toBe(true);
  expect(intOrNull(job.metrics.execution_ms)).toBe(true);
  expect(Number.isInteger(job.priority)).toBe(true);
  expect(job.metadata === null || (typeof job.metadata === 'object' && !Array.isArray(job.metadata))).toBe(true);
  expect(typeof job.outputs_reused).toBe('boolean');
  expect(job.urls).toEqual({
    self: `${prefix}/api/v2/jobs/${job.id}`,
    events: `${prefix}/api/v2/jobs/${job.id}/events`,
    cancel: `${prefix}/api/v2/jobs/${job.id}/cancel`,
  });
  return job;
}

export function expectProgressShape(p: any): void {
  expect(Object.keys(p).sort()).toEqual(PROGRESS_FIELDS);
  expect(typeof p.value).toBe('number');
  expect(p.value).toBeGreaterThanOrEqual(0);
  expect(p.value).toBeLessThanOrEqual(1);
  expect(Number.isInteger(p.nodes_done)).toBe(true);
  expect(Number.isInteger(p.nodes_total)).toBe(true);
  expect(p.current_node === null || typeof p.current_node === 'string').toBe(true);
  expect(p.current_node_class === null || typeof p.current_node_class === 'string').toBe(true);
  expect(intOrNull(p.step)).toBe(true);
  expect(intOrNull(p.steps)).toBe(true);
  expect(p.message === null || typeof p.message === 'string').toBe(true);
}

export function expectOutputShape(o: any, jobId: string): void {
  expect(Object.keys(o).sort()).toEqual(OUTPUT_FIELDS);
  expect(typeof o.node_id).toBe('string');
  expect(typeof o.name).toBe('string');
  expect(['image', 'video', 'audio', 'text', 'file', 'latent']).toContain(o.type);
  expect(typeof o.content_type).toBe('string');
  expect(Number.isInteger(o.size_bytes)).toBe(true);
  expect(o.id).toMatch(UUID);
  expect(o.hash).toMatch(/^blake3:[0-9a-f]{64}$/);
  expect(() => new URL(o.url)).not.toThrow();
  expect(o.url_expires_at).toMatch(ISO);
  expect(o.job_id).toBe(jobId);
}

/** EmptyImage(width x height, color) -> SaveImage, as nodes 'e' and 's'. */
export function saveImageWorkflow(color = 0x336699, width = 3, height = 2, prefix = 'jobs'): Workflow {
  return {
    e: { class_type: 'EmptyImage', inputs: { width, height, batch_size: 1, color } },
    s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: prefix } },
  };
}

/** A typed asset reference as a workflow input value. */
export const assetRef = (id: string) => ({ __type: 'core/ASSET', info: { id } });

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * EmptyImage `small`² scaled (bicubic) up to `large`² and back, `steps`
 * times, then saved: seconds of computing. The defaults hold about 0.2 GB of
 * images at the end; 2048/4096 over 6 steps about 0.8 GB.
 */
export function heavyWorkflow({ steps = 10, small = 1024, large = 2048, color = 0x336699 } = {}): Workflow {
  const workflow: Workflow = { '1': { class_type: 'EmptyImage', inputs: { width: small, height: small, batch_size: 1, color } } };
  let previous = '1';
  for (let i = 0; i < steps; i++) {
    const size = i % 2 === 0 ? large : small;
    workflow[`s${i}`] = {
      class_type: 'ImageScale',
      inputs: { image: [previous, 0], upscale_method: 'bicubic', width: size, height: size, crop: 'disabled' },
    };
    previous = `s${i}`;
  }
  workflow.save = { class_type: 'SaveImage', inputs: { images: [previous, 0], filename_prefix: 'heavy' } };
  return workflow;
}
