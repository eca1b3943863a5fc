// `graphrun serve --allow-private-urls` (or GRAPHRUN_ALLOW_PRIVATE_URLS=1|true)
// end to end: a LoadImageFromURL -> SaveImage job against a PNG served on
// 127.0.0.1 fails with ImageDownloadError by default and succeeds with it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliServers } from './helpers/cli.ts';
import { buildPng } from './local-engine/png-fixtures.ts';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];

const run = cliServers('graphrun-cli-urls-', ['GRAPHRUN_ALLOW_PRIVATE_URLS']);
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
});

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

describe('graphrun serve --allow-private-urls', () => {
  it('by default LoadImageFromURL refuses a loopback URL with ImageDownloadError', async () => {
    const cli = await run([]);
    const job = await runJob(await cli.url);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({
      code: 'node_execution_error',
      exception_type: 'ImageDownloadError',
      node_id: 'load',
      class_type: 'LoadImageFromURL',
    });
    expect(job.error.message).toMatch(/127\.0\.0\.1/);
    expect(job.outputs).toEqual([]);
    expect(await cli.stop()).toBe(0);
  });

  it('GRAPHRUN_ALLOW_PRIVATE_URLS=0 keeps the default', async () => {
    const cli = await run([], { GRAPHRUN_ALLOW_PRIVATE_URLS: '0' });
    const job = await runJob(await cli.url);
    expect(job).toMatchObject({ status: 'failed', error: { exception_type: 'ImageDownloadError' } });
    expect(await cli.stop()).toBe(0);
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
    expect(await cli.stop()).toBe(0);
  });

  it('exits 2 naming the variable when GRAPHRUN_ALLOW_PRIVATE_URLS is not 1, true, 0 or false', async () => {
    const cli = await run([], { GRAPHRUN_ALLOW_PRIVATE_URLS: 'yes' });
    await cli.url.catch(() => undefined);
    expect(await cli.exited).toBe(2);
    expect(cli.output().stderr).toMatch(/GRAPHRUN_ALLOW_PRIVATE_URLS must be 1, true, 0 or false, got "yes"/);
  });
});
