// `graphrun` storage combinations and start failures, with real processes:
// PostgreSQL with blob files in a directory, SQLite under --data with blobs
// in S3 (s3rver), each serving an upload; and storage that cannot be reached
// (a refused database, a missing bucket, an S3 endpoint nobody listens on)
// ending the start with exit 1 and a message naming it, without its password.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommands } from './helpers/cli.ts';
import { INPUT_PNG, uploadPng } from './helpers/cli-jobs.ts';
import { freePort } from './helpers/free-port.ts';
import { usePostgres } from './helpers/postgres.ts';
import { awsEnvOf, type S3rverFixture, startS3rver } from './helpers/s3rver.ts';

const UNSET = ['GRAPHRUN_DATA', 'GRAPHRUN_DATABASE_URL', 'GRAPHRUN_BLOBS_URL', 'GRAPHRUN_RUN_JOBS', 'GRAPHRUN_TOKEN', 'AWS_ENDPOINT_URL'];
const graphrun = cliCommands('graphrun-cli-storage-', UNSET);
const postgres = usePostgres();
let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(() => s3?.close());

const awsEnv = (endpoint = s3.endpoint) => awsEnvOf(endpoint);

/** Reads the bytes back through the signed `url` the upload answered with. */
async function roundTrip(base: string): Promise<void> {
  const asset = await uploadPng(base);
  expect(new Uint8Array(await (await fetch(asset.url)).arrayBuffer())).toEqual(INPUT_PNG);
}

describe('graphrun storage combinations', () => {
  it('PostgreSQL with blobs in a directory, and SQLite under --data with blobs in S3', async () => {
    const [pgFs, sqliteS3] = await Promise.all([
      graphrun('serve', ['--database', await postgres.newDatabase(), '--threads', '1']),
      graphrun('serve', ['--blobs', `s3://${s3.bucket}/mixed`, '--threads', '1'], awsEnv()),
    ]);
    await Promise.all([roundTrip(await pgFs.url), roundTrip(await sqliteS3.url)]);

    // Blob files under --data and no SQLite there; SQLite under --data and the bytes in the bucket.
    expect((await readdir(pgFs.data)).sort()).toEqual(['blobs']);
    expect((await readdir(sqliteS3.data)).sort()).toEqual(expect.arrayContaining(['graphrun.db']));
    expect(await readdir(sqliteS3.data)).not.toContain('blobs');
    expect((await s3.keys('mixed/')).filter((key) => !key.startsWith('mixed/.tmp/'))).toHaveLength(1);
    expect(await Promise.all([pgFs.stop(), sqliteS3.stop()])).toEqual([0, 0]);
  });
});

describe('graphrun with storage it cannot reach', () => {
  it('exits 1 naming the database, without its password, when PostgreSQL refuses the connection', async () => {
    const port = await freePort();
    const cli = await graphrun('runner', ['--database', `postgres://graphrun:hunter2@127.0.0.1:${port}/graphrun`]);
    expect(await cli.exited).toBe(1);
    const { stderr } = cli.output();
    expect(stderr).toMatch(
      new RegExp(
        `^graphrun: could not start: cannot open the PostgreSQL database postgres://graphrun:\\*\\*\\*@127\\.0\\.0\\.1:${port}/graphrun: .*ECONNREFUSED`,
      ),
    );
    expect(stderr).not.toContain('hunter2');
  });

  it('exits 1 naming the bucket when it does not exist', async () => {
    const cli = await graphrun('serve', ['--blobs', 's3://no-such-bucket/p'], awsEnv());
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr).toMatch(
      /^graphrun: could not start: cannot reach the S3 bucket s3:\/\/no-such-bucket\/p\/ at http:\/\/127\.0\.0\.1:\d+: S3 ListObjectsV2: 404 NoSuchBucket/,
    );
  });

  it('exits 1 naming the endpoint when nothing answers there', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const cli = await graphrun('runner', ['--blobs', `s3://${s3.bucket}/p`], awsEnv(endpoint));
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr).toMatch(
      new RegExp(`^graphrun: could not start: cannot reach the S3 bucket s3://${s3.bucket}/p/ at ${endpoint}: .*ECONNREFUSED`),
    );
  });
});
