// examples/lambda.ts as deployed: its `handler` in front of SQLite and files
// under GRAPHRUN_DATA, API only; a submitted job waits queued until the
// worker of examples/lambda-worker.ts opens the same storage and runs it,
// and the output comes back through the function.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Service } from '../index.ts';
import { blake3Of, randomBytes } from './helpers/assets.ts';
import { type Harness, uploadForm } from './helpers/harness.ts';
import { jobNow, PNG_SIGNATURE, saveImageWorkflow, sleep, submitOk, waitForJob } from './helpers/jobs.ts';
import { type BufferedHandler, lambdaHarness } from './helpers/lambda-events.ts';

let dir: string;
let api: { handler: BufferedHandler; service: Service; streamHandler: unknown };
let h: Harness;
const log: Array<{ event: any; result: any }> = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-lambda-'));
  process.env.GRAPHRUN_DATA = dir;
  delete process.env.GRAPHRUN_TOKEN;
  api = await import('../examples/lambda.ts');
  h = lambdaHarness('http-api-v2', api.handler, api.service, log);
});
afterAll(async () => {
  await api?.service.close();
  await rm(dir, { recursive: true, force: true });
});

it('exports a buffered handler and a streaming one', () => {
  expect(typeof api.handler).toBe('function');
  expect(typeof api.streamHandler).toBe('function');
});

it('uploads and reads assets through the handler, stored under GRAPHRUN_DATA', async () => {
  const bytes = randomBytes(3000);
  const up = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(bytes, { content_type: 'application/octet-stream' }, 'x.bin') });
  expect(up.status).toBe(201);
  const asset = (await up.json()) as any;
  expect(asset.hash).toBe(await blake3Of(bytes));
  const content = await h.fetch(asset.url);
  expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes);
  expect(log.at(-1)!.result.isBase64Encoded).toBe(true);
});

it('jobs wait queued in the function and run in the worker that shares its storage', async () => {
  const job = await submitOk(h, saveImageWorkflow(0x102030, 4, 4, 'lambda'));
  await sleep(300);
  // Nothing in the function runs it.
  expect((await jobNow(h, job.id)).status).toBe('queued');
  const worker: { service: Service } = await import('../examples/lambda-worker.ts');
  try {
    const done = await waitForJob(h, job.id, 'succeeded', 10_000);
    expect(done.outputs).toHaveLength(1);
    const image = await h.fetch(done.outputs[0].url);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect([...new Uint8Array(await image.arrayBuffer()).slice(0, 8)]).toEqual(PNG_SIGNATURE);
  } finally {
    await worker.service.close();
  }
}, 20_000);
