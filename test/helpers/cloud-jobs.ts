// Shared helpers of the cloud-compatible jobs tests (test/cloud-jobs-*):
// a jobs harness whose engine also knows a partner node and records the
// extra_data each job was run with, requests as an account's X-API-Key,
// JSON posts and reads, and the reference's error-shape assertions.
import { expect } from 'vitest';
import { defineNode } from '../../engine/local/define-node.ts';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import type { Engine } from '../../engine/types.ts';
import type { ServiceOptions } from '../../index.ts';
import type { Harness, Mode } from './harness.ts';
import { type JobsHarness, type Result, startJobs, withHeaders } from './jobs.ts';
import { createTestNodes } from './local-nodes.ts';

export const ACCOUNTS = [
  { id: 'alice', tier: 'free', apiKeys: ['key-alice'] },
  { id: 'bob', tier: 'free', apiKeys: ['key-bob'] },
];

export interface CloudJobsHarness extends JobsHarness {
  /** extra_data the engine received, by job id. */
  extraSeen: Map<string, Record<string, unknown> | undefined>;
}

/** A partner node: an output node that calls an external service (here it only echoes its input). */
export const partnerNode = defineNode({
  name: 'PartnerEcho',
  category: 'partner',
  api_node: true,
  output_node: true,
  required: { value: ['INT', {}] },
  run: ({ value }) => ({ outputs: [], ui: { text: [String(value)] } }),
});

/** Sleeps `ms` without looking at the cancel signal: a canceled job stays `canceling` until the node returns. */
export const stubbornNode = defineNode({
  name: 'Stubborn',
  category: 'test',
  cacheable: false,
  required: { ms: ['INT', { min: 0, max: 60_000 }] },
  outputs: [{ type: 'INT' }],
  run: async ({ ms }) => {
    await new Promise((r) => setTimeout(r, ms as number));
    return { outputs: [ms] };
  },
});

/** Stubborn -> Show: canceled while the first node runs, it ends canceled once that node returns. */
export const stubbornWorkflow = (ms: number) => ({
  s1: { class_type: 'Stubborn', inputs: { ms } },
  s2: { class_type: 'Show', inputs: { value: ['s1', 0] } },
});

/** The local engine with built-in, test, partner and stubborn nodes, recording each job's extra_data. */
export async function startCloudJobs(mode: Mode, options: Partial<ServiceOptions> = {}): Promise<CloudJobsHarness> {
  const test = createTestNodes();
  const local = createLocalEngine({ nodes: [...builtinNodes, ...test.nodes, partnerNode, stubbornNode] });
  const extraSeen = new Map<string, Record<string, unknown> | undefined>();
  const engine: Engine = {
    name: local.name,
    readiness: () => local.readiness(),
    nodeDefinitions: () => local.nodeDefinitions(),
    validate: (wf) => local.validate(wf),
    execute: (job, ctx) => {
      extraSeen.set(job.id, job.extra_data);
      return local.execute(job, ctx);
    },
    close: () => local.close(),
  };
  const h = await startJobs(mode, { engine, ...options });
  return Object.assign(h, { runs: test.runs, extraSeen });
}

/** Requests as the account holding this key, the cloud surface's way. */
export const asCloud = <H extends Harness>(h: H, key: string): H => withHeaders(h, { 'x-api-key': key });

/** The harness with ACCOUNTS, and requests as alice and bob through their keys. */
export async function startCloudAccounts(
  mode: Mode,
  options: Partial<ServiceOptions> = {},
): Promise<{ h: CloudJobsHarness; alice: CloudJobsHarness; bob: CloudJobsHarness }> {
  const h = await startCloudJobs(mode, { accounts: ACCOUNTS, ...options });
  return { h, alice: asCloud(h, 'key-alice'), bob: asCloud(h, 'key-bob') };
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

/** POSTs a JSON body (a string is sent as is) with Content-Type application/json unless given. */
export async function postJson(h: Harness, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Result> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return read(await h.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload }));
}

export const getJson = async (h: Harness, path: string): Promise<Result> => read(await h.fetch(path));

/** POST /api/prompt `{prompt, ...extra}`; expects 200 and returns the body. */
export async function promptOk(h: Harness, prompt: unknown, extra: Record<string, unknown> = {}): Promise<any> {
  const { res, body } = await postJson(h, '/api/prompt', { prompt, ...extra });
  expect({ status: res.status, body }).toMatchObject({ status: 200 });
  return body;
}

/** The cloud status of a job now (GET /api/job/{id}/status). */
export async function cloudStatusOf(h: Harness, id: string): Promise<string> {
  const { res, body } = await getJson(h, `/api/job/${id}/status`);
  expect(res.status).toBe(200);
  return body.status;
}

/** Asserts the cloud error body `{code, message}` and the status. */
export function expectCloudError(r: Result, status: number, code: string): void {
  expect({ status: r.res.status, body: r.body }).toMatchObject({ status, body: { code, message: expect.any(String) } });
  expect(r.res.headers.get('content-type')).toMatch(/^application\/json/);
}

/** Asserts POST /prompt's refusal: the reference's `{error, node_errors}` plus `{code, message}`. */
export function expectPromptError(r: Result, status: number, code: string, type: string): any {
  expectCloudError(r, status, code);
  const { error, node_errors } = r.body;
  expect(error).toEqual({ type, message: expect.any(String), details: expect.any(String), extra_info: expect.any(Object) });
  expect(typeof node_errors).toBe('object');
  for (const entry of Object.values<any>(node_errors)) {
    expect(Object.keys(entry).sort()).toEqual(['class_type', 'dependent_outputs', 'errors']);
    expect(Array.isArray(entry.dependent_outputs)).toBe(true);
    for (const e of entry.errors) {
      expect(e).toEqual({ type: expect.any(String), message: expect.any(String), details: expect.any(String), extra_info: expect.any(Object) });
    }
  }
  return r.body;
}
