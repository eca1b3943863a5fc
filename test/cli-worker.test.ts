// `graphrun serve --worker <url>` (and GRAPHRUN_WORKERS) end to end: the CLI
// in its own process runs jobs on fake engine workers; a job submitted through
// v2 and one through the cloud `/api/prompt` both run on the worker, and their
// PNG outputs download from graphrun with the worker's bytes. A worker URL
// that is not http(s) exits 2 with a clear message. --warmup runs its workflow
// on the worker before the first job.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineNode } from '../engine/local/define-node.ts';
import { createImageBatch } from '../lib/image/batch.ts';
import { type FakeWorker, startFakeWorker } from './fakes/comfyui-worker.ts';
import { cliServers } from './helpers/cli.ts';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];

/** A node class only the second worker has: a job using it can only run there. */
const onlyOnB = defineNode({
  name: 'GrayImage',
  category: 'image',
  required: { size: ['INT', { default: 8, min: 1, max: 256 }] },
  outputs: [{ type: 'IMAGE' }],
  run: ({ size }) => {
    const image = createImageBatch(size as number, size as number, 1);
    image.data.fill(0.5);
    return { outputs: [image] };
  },
});

const saveWorkflow = (color: number) => ({
  img: { class_type: 'EmptyImage', inputs: { width: 16, height: 8, batch_size: 1, color } },
  save: { class_type: 'SaveImage', inputs: { images: ['img', 0], filename_prefix: 'cli' } },
});
const grayWorkflow = () => ({
  img: { class_type: 'GrayImage', inputs: { size: 4 } },
  save: { class_type: 'SaveImage', inputs: { images: ['img', 0], filename_prefix: 'gray' } },
});

let a: FakeWorker;
let b: FakeWorker;
const run = cliServers('graphrun-cli-worker-', ['GRAPHRUN_WORKERS']);

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeWorker(), startFakeWorker({ nodes: [onlyOnB] })]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function pollUntil<T>(what: string, get: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await get();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not done in 10 s: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Submits through POST /api/v2/jobs and polls the job to a terminal status. */
async function runV2(base: string, workflow: unknown): Promise<any> {
  const res = await fetch(`${base}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow }),
  });
  const submitted = (await res.json()) as any;
  expect({ status: res.status, body: submitted }).toMatchObject({ status: 201, body: { id: expect.any(String) } });
  return pollUntil(
    `job ${submitted.id}`,
    async () => (await fetch(`${base}/api/v2/jobs/${submitted.id}`)).json() as Promise<any>,
    (job) => TERMINAL.includes(job.status),
  );
}

const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

/** The bytes of the file the worker saved for this prompt's SaveImage node. */
async function workerFile(worker: FakeWorker, promptId: string): Promise<Uint8Array> {
  const history = (await (await fetch(`${worker.url}/history/${promptId}`)).json()) as any;
  const [file] = history[promptId].outputs.save.images;
  const res = await fetch(`${worker.url}/view?${new URLSearchParams({ filename: file.filename, subfolder: file.subfolder, type: file.type })}`);
  expect(res.status).toBe(200);
  return bytesOf(res);
}

/** A v2 job's single PNG output, downloaded from graphrun, checked against the worker's file. */
async function expectPngOutput(job: any, worker: FakeWorker): Promise<void> {
  expect({ status: job.status, error: job.error }).toEqual({ status: 'succeeded', error: null });
  expect(job.outputs).toHaveLength(1);
  expect(job.outputs[0]).toMatchObject({ node_id: 'save', type: 'image', content_type: 'image/png', job_id: job.id });
  const res = await fetch(job.outputs[0].url);
  expect(res.status).toBe(200);
  const content = await bytesOf(res);
  expect(Array.from(content.subarray(0, 8))).toEqual(PNG_SIGNATURE);
  expect(content).toEqual(await workerFile(worker, job.id));
}

const promptsOf = (w: FakeWorker) => w.submissions.map((s) => s.prompt_id);

describe('graphrun serve --worker', () => {
  it('runs v2 and cloud /api/prompt jobs on the worker and serves their PNG outputs', async () => {
    const cli = await run(['--worker', `${a.url}/`]);
    const base = await cli.url;
    expect(cli.output().stderr).toContain(`running jobs on 1 worker(s): ${a.url}\n`);

    const job = await runV2(base, saveWorkflow(0x336699));
    expect(promptsOf(a)).toContain(job.id);
    await expectPngOutput(job, a);

    const res = await fetch(`${base}/api/prompt`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: saveWorkflow(0x996633) }),
    });
    const prompt = (await res.json()) as any;
    expect({ status: res.status, body: prompt }).toMatchObject({ status: 200, body: { prompt_id: expect.any(String), node_errors: {} } });
    const done = await pollUntil(
      `prompt ${prompt.prompt_id}`,
      async () => (await fetch(`${base}/api/jobs/${prompt.prompt_id}`)).json() as Promise<any>,
      (j) => !['pending', 'in_progress'].includes(j.status),
    );
    expect(done).toMatchObject({ id: prompt.prompt_id, status: 'completed', outputs_count: 1 });
    expect(promptsOf(a)).toContain(prompt.prompt_id);
    const [file] = done.outputs.save.images;
    expect(file).toMatchObject({ filename: expect.stringMatching(/\.png$/), type: 'output' });
    // /api/view answers a redirect to the signed content URL; fetch follows it.
    const view = await fetch(`${base}/api/view?${new URLSearchParams({ filename: file.filename, subfolder: file.subfolder, type: file.type })}`);
    expect(view.status).toBe(200);
    expect(view.headers.get('content-type')).toBe('image/png');
    expect(await bytesOf(view)).toEqual(await workerFile(a, prompt.prompt_id));
    expect(await cli.stop()).toBe(0);
  });

  it('GRAPHRUN_WORKERS makes a pool: a job goes to the worker that has its node classes', async () => {
    const cli = await run([], { GRAPHRUN_WORKERS: ` ${a.url}, ${b.url} ` });
    const base = await cli.url;
    expect(cli.output().stderr).toContain(`running jobs on 2 worker(s): ${a.url}, ${b.url}\n`);
    // The pool must have heard from both before the class only B has is known.
    await pollUntil(
      'object_info',
      async () => (await fetch(`${base}/api/object_info`)).json() as Promise<any>,
      (defs) => 'GrayImage' in defs,
    );

    const gray = await runV2(base, grayWorkflow());
    expect(promptsOf(b)).toContain(gray.id);
    expect(promptsOf(a)).not.toContain(gray.id);
    await expectPngOutput(gray, b);

    const plain = await runV2(base, saveWorkflow(0x123456));
    expect([...promptsOf(a), ...promptsOf(b)]).toContain(plain.id);
    await expectPngOutput(plain, promptsOf(a).includes(plain.id) ? a : b);
    expect(await cli.stop()).toBe(0);
  });

  it('with two workers, two jobs run at once, one on each', async () => {
    a.failures.nodeDelayMs = 300;
    b.failures.nodeDelayMs = 300;
    try {
      const cli = await run(['--worker', a.url, '--worker', b.url]);
      const base = await cli.url;
      const submit = async (color: number) => {
        const res = await fetch(`${base}/api/v2/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workflow: saveWorkflow(color) }),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as any).id as string;
      };
      const ids = [await submit(0x010203), await submit(0x040506)];
      const statuses = () => Promise.all(ids.map(async (id) => ((await (await fetch(`${base}/api/v2/jobs/${id}`)).json()) as any).status as string));
      await pollUntil('both jobs running together', statuses, (s) => s.every((x) => x === 'running'));
      expect([promptsOf(a).filter((p) => ids.includes(p)).length, promptsOf(b).filter((p) => ids.includes(p)).length]).toEqual([1, 1]);
      await pollUntil('both jobs done', statuses, (s) => s.every((x) => x === 'succeeded'));
      expect(await cli.stop()).toBe(0);
    } finally {
      a.failures.nodeDelayMs = 0;
      b.failures.nodeDelayMs = 0;
    }
  });

  it('--warmup: the worker runs the warm-up workflow before its first job', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'graphrun-cli-warmup-'));
    try {
      const warmup = join(dir, 'warmup.json');
      writeFileSync(warmup, JSON.stringify({ prompt: saveWorkflow(0x0a0b0c) }));
      const c = await startFakeWorker();
      try {
        const cli = await run(['--worker', c.url, '--warmup', warmup]);
        const base = await cli.url;
        const job = await runV2(base, saveWorkflow(0x0d0e0f));
        await expectPngOutput(job, c);
        // The warm-up went first, as the workflow given, under a prompt id of its own.
        expect(promptsOf(c)).toEqual([expect.stringMatching(/^warmup-/), job.id]);
        expect(c.submissions[0].body.prompt).toEqual(saveWorkflow(0x0a0b0c));
        expect(await cli.stop()).toBe(0);
      } finally {
        await c.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['--worker ftp://x', ['--worker', 'ftp://x'], {}, /--worker must be an http\(s\) URL such as http:\/\/host:8188, got "ftp:\/\/x"/],
    [
      'GRAPHRUN_WORKERS=ftp://x',
      [],
      { GRAPHRUN_WORKERS: 'ftp://x' },
      /GRAPHRUN_WORKERS must be an http\(s\) URL such as http:\/\/host:8188, got "ftp:\/\/x"/,
    ],
  ])('%s exits 2 with a clear message', async (_name, args, env, message) => {
    const cli = await run(args, env);
    await cli.url.catch(() => undefined);
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toMatch(message);
    expect(cli.output().stdout).toBe('');
  });
});
