// `graphrun serve --allow-private-urls` (or GRAPHRUN_ALLOW_PRIVATE_URLS=1|true)
// end to end: a LoadImageFromURL -> SaveImage job against a PNG served on
// 127.0.0.1 fails with ImageDownloadError by default and succeeds with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildPng } from './local-engine/png-fixtures.ts';

const BIN = new URL('../bin/graphrun.js', import.meta.url).pathname;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];

const dirs: string[] = [];
const children: ChildProcess[] = [];
let images: Server;
let imageUrl: string;

beforeAll(async () => {
  // A 2x1 RGB PNG: one red pixel, one blue.
  const png = buildPng({ width: 2, height: 1, colorType: 2, bitDepth: 8, samples: [255, 0, 0, 0, 0, 255] });
  images = createServer((req, res) => {
    if (req.url !== '/tiny.png') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/tiny.png`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => images.close(() => resolve()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
// Whatever happened, no CLI outlives its test.
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function run(args: string[], env: Record<string, string> = {}) {
  const data = await mkdtemp(join(tmpdir(), 'graphrun-cli-urls-'));
  dirs.push(data);
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  // The test decides: an operator's own setting must not leak in.
  if (!('GRAPHRUN_ALLOW_PRIVATE_URLS' in env)) delete childEnv.GRAPHRUN_ALLOW_PRIVATE_URLS;
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', data, ...args], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const m = /graphrun listening on (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return { child, url, exited, output: () => ({ stdout, stderr }) };
}

const workflow = () => ({
  load: { class_type: 'LoadImageFromURL', inputs: { url: imageUrl } },
  save: { class_type: 'SaveImage', inputs: { images: ['load', 0], filename_prefix: 'from-url' } },
});

/** Submits the URL job and polls it to a terminal status. */
async function runJob(base: string): Promise<any> {
  const res = await fetch(`${base}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: workflow() }),
  });
  const submitted = (await res.json()) as any;
  expect({ status: res.status, body: submitted }).toMatchObject({ status: 201 });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = (await (await fetch(`${base}/api/v2/jobs/${submitted.id}`)).json()) as any;
    if (TERMINAL.includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job not done in 10 s: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stop(cli: Awaited<ReturnType<typeof run>>) {
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
}

describe('graphrun serve --allow-private-urls', () => {
  it('by default LoadImageFromURL refuses a loopback URL with ImageDownloadError', async () => {
    const cli = await run([]);
    const job = await runJob(await cli.url);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ code: 'node_execution_error', exception_type: 'ImageDownloadError', node_id: 'load', class_type: 'LoadImageFromURL' });
    expect(job.error.message).toMatch(/127\.0\.0\.1/);
    expect(job.outputs).toEqual([]);
    await stop(cli);
  });

  it('GRAPHRUN_ALLOW_PRIVATE_URLS=0 keeps the default', async () => {
    const cli = await run([], { GRAPHRUN_ALLOW_PRIVATE_URLS: '0' });
    const job = await runJob(await cli.url);
    expect(job).toMatchObject({ status: 'failed', error: { exception_type: 'ImageDownloadError' } });
    await stop(cli);
  });

  it.each([
    ['the flag', ['--allow-private-urls'], {}],
    ['GRAPHRUN_ALLOW_PRIVATE_URLS=1', [], { GRAPHRUN_ALLOW_PRIVATE_URLS: '1' }],
    ['GRAPHRUN_ALLOW_PRIVATE_URLS=true', [], { GRAPHRUN_ALLOW_PRIVATE_URLS: 'true' }],
  ])('with %s the job loads the image and saves it', async (_name, args, env) => {
    const cli = await run(args, env);
    const job = await runJob(await cli.url);
    expect({ status: job.status, error: job.error }).toEqual({ status: 'succeeded', error: null });
    expect(job.outputs).toHaveLength(1);
    expect(job.outputs[0]).toMatchObject({ node_id: 'save', type: 'image', content_type: 'image/png', job_id: job.id });
    const content = new Uint8Array(await (await fetch(job.outputs[0].url)).arrayBuffer());
    expect(Array.from(content.subarray(0, 8))).toEqual(PNG_SIGNATURE);
    await stop(cli);
  });

  it('exits 2 naming the variable when GRAPHRUN_ALLOW_PRIVATE_URLS is not 1, true, 0 or false', async () => {
    const cli = await run([], { GRAPHRUN_ALLOW_PRIVATE_URLS: 'yes' });
    await cli.url.catch(() => undefined);
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toMatch(/GRAPHRUN_ALLOW_PRIVATE_URLS must be 1, true, 0 or false, got "yes"/);
  });
});
