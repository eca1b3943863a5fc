// `graphrun` option parsing for scale-out: --database (PostgreSQL URLs only),
// --blobs (an S3 bucket with credentials from the AWS variables, or a
// directory), --no-run-jobs, and the `runner` command with the flags it
// shares with `serve` and the ones it refuses.
import { describe, expect, it } from 'vitest';
import { CliUsageError, DEFAULT_DATA, parseCliArgs, USAGE } from '../adapters/node/cli-options.ts';

const AWS = { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'SECRET' };

const serveOptions = (argv: string[], env: Record<string, string> = {}) => {
  const parsed = parseCliArgs(['serve', ...argv], env);
  if (parsed.command !== 'serve') throw new Error('expected serve');
  return parsed.options;
};

const refusal = (argv: string[], env: Record<string, string> = {}) => {
  try {
    parseCliArgs(argv, env);
  } catch (err) {
    expect(err).toBeInstanceOf(CliUsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(argv)}`);
};

describe('--database / GRAPHRUN_DATABASE_URL', () => {
  it('is unset by default: SQLite under --data', () => {
    expect(serveOptions([])).toMatchObject({ data: DEFAULT_DATA, database: undefined, blobs: undefined });
  });

  it.each(['postgres://u:p@db:5432/graphrun', 'postgresql://db/graphrun', 'POSTGRES://db/x', 'postgres:///graphrun?host=/var/run/postgresql'])(
    'takes %j as it is',
    (url) => {
      expect(serveOptions(['--database', url]).database).toBe(url);
    },
  );

  it('takes the variable, and the flag over it', () => {
    const env = { GRAPHRUN_DATABASE_URL: 'postgres://env/db' };
    expect(serveOptions([], env).database).toBe('postgres://env/db');
    expect(serveOptions(['--database=postgres://flag/db'], env).database).toBe('postgres://flag/db');
    expect(serveOptions([], { GRAPHRUN_DATABASE_URL: '' }).database).toBeUndefined();
  });

  it.each([['./graphrun.db'], ['sqlite:///var/lib/graphrun.db'], ['mysql://u@h/db'], ['http://db:5432']])(
    'refuses %j, pointing at --data for SQLite',
    (url) => {
      expect(refusal(['serve', '--database', url])).toBe(
        `--database takes a postgres:// or postgresql:// URL, got "${url}" (SQLite is the default: its file lives under --data).`,
      );
    },
  );

  it('names the variable, never echoes a password, and refuses an empty flag', () => {
    const message = refusal(['serve'], { GRAPHRUN_DATABASE_URL: 'mysql://admin:hunter2@h/db' });
    expect(message).toMatch(/^GRAPHRUN_DATABASE_URL takes a postgres:\/\/ .*"mysql:\/\/admin:\*\*\*@h\/db"/);
    expect(message).not.toContain('hunter2');
    expect(refusal(['serve', '--database', ''])).toBe('--database must not be empty.');
  });
});

describe('--blobs / GRAPHRUN_BLOBS_URL', () => {
  it('takes an S3 bucket and prefix, with credentials, region and endpoint from the AWS variables', () => {
    const env = { ...AWS, AWS_SESSION_TOKEN: 'TOKEN', AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' };
    expect(serveOptions(['--blobs', 's3://my-bucket/graphrun/blobs'], env).blobs).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'graphrun/blobs/',
      env: {
        credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' },
        region: 'eu-west-1',
        endpoint: 'http://127.0.0.1:9000',
      },
    });
    expect(serveOptions(['--blobs', 's3://my-bucket'], AWS).blobs).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: '',
      env: { credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' } },
    });
  });

  it('takes a directory, the variable, and the flag over it', () => {
    expect(serveOptions(['--blobs', '/srv/blobs']).blobs).toEqual({ kind: 'dir', dir: '/srv/blobs' });
    expect(serveOptions([], { ...AWS, GRAPHRUN_BLOBS_URL: 's3://env-bucket/p' }).blobs).toMatchObject({
      kind: 's3',
      bucket: 'env-bucket',
      prefix: 'p/',
    });
    expect(serveOptions(['--blobs', './b'], { GRAPHRUN_BLOBS_URL: 's3://env-bucket/p' }).blobs).toEqual({ kind: 'dir', dir: './b' });
  });

  it.each([['s3://'], ['s3:///prefix'], ['S3://']])('refuses %j: no bucket', (url) => {
    expect(refusal(['serve', '--blobs', url], AWS)).toBe(`--blobs names no bucket: give s3://bucket/prefix, got "${url}".`);
  });

  it.each([
    ['s3://Bad_Bucket/p', /^--blobs must be s3:\/\/bucket\/prefix or a directory: invalid S3 bucket name/],
    ['s3://bucket/a//b', /^--blobs must be s3:\/\/bucket\/prefix or a directory: invalid S3 prefix/],
    ['gs://bucket/p', /^--blobs must be s3:\/\/bucket\/prefix or a directory, got "gs:\/\/bucket\/p"\.$/],
    ['https://bucket.example/p', /^--blobs must be s3:\/\/bucket\/prefix or a directory/],
  ])('refuses %j', (url, message) => {
    expect(refusal(['serve', '--blobs', url], AWS)).toMatch(message);
  });

  it('refuses a bucket without both halves of the credentials, naming the variables', () => {
    const want = '--blobs needs S3 credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.';
    expect(refusal(['serve', '--blobs', 's3://bucket/p'])).toBe(want);
    expect(refusal(['serve', '--blobs', 's3://bucket/p'], { AWS_ACCESS_KEY_ID: 'AKID' })).toBe(want);
    expect(refusal(['serve'], { GRAPHRUN_BLOBS_URL: 's3://bucket/p', AWS_SECRET_ACCESS_KEY: 'x' })).toMatch(
      /^GRAPHRUN_BLOBS_URL needs S3 credentials/,
    );
  });
});

describe('--no-run-jobs / GRAPHRUN_RUN_JOBS', () => {
  it('runs jobs by default; the flag makes an API-only instance', () => {
    expect(serveOptions([]).runJobs).toBe(true);
    expect(serveOptions(['--no-run-jobs']).runJobs).toBe(false);
    expect(serveOptions(['--no-run-jobs'], { GRAPHRUN_RUN_JOBS: '1' }).runJobs).toBe(false);
  });

  it.each([
    ['0', false],
    ['false', false],
    ['FALSE', false],
    ['1', true],
    ['true', true],
    ['', true],
  ])('GRAPHRUN_RUN_JOBS=%j runs jobs: %s', (value, runJobs) => {
    expect(serveOptions([], { GRAPHRUN_RUN_JOBS: value }).runJobs).toBe(runJobs);
  });

  it('refuses any other value, naming the variable', () => {
    expect(refusal(['serve'], { GRAPHRUN_RUN_JOBS: 'no' })).toBe('GRAPHRUN_RUN_JOBS must be 1, true, 0 or false, got "no".');
  });
});

describe('graphrun runner', () => {
  it('takes the storage and engine options serve takes, and none of the HTTP ones', () => {
    const env = { ...AWS, GRAPHRUN_THREADS: '2' };
    const argv = ['runner', '--database', 'postgres://db/x', '--blobs', 's3://b-1/p', '--worker', 'http://gpu:8188', '--worker=http://gpu2:8188'];
    expect(parseCliArgs(argv, env)).toEqual({
      command: 'runner',
      options: {
        data: DEFAULT_DATA,
        database: 'postgres://db/x',
        blobs: { kind: 's3', bucket: 'b-1', prefix: 'p/', env: { credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' } } },
        allowPrivateUrls: false,
        workers: ['http://gpu:8188', 'http://gpu2:8188'],
        threads: 2,
        musicUpstream: undefined,
        videoUpstream: undefined,
        pool: {},
      },
    });
    expect(parseCliArgs(['runner', '--data', './d', '--threads', '1'])).toMatchObject({ command: 'runner', options: { data: './d', threads: 1 } });
  });

  it('ignores the variables only serve reads, so one environment serves both commands', () => {
    // Values serve would refuse, too: the runner does not read them at all.
    const env = { GRAPHRUN_RUN_JOBS: 'maybe', GRAPHRUN_PORT: 'eighty', GRAPHRUN_HOST: '0.0.0.0', GRAPHRUN_TOKEN: 't' };
    const parsed = parseCliArgs(['runner'], env);
    if (parsed.command !== 'runner') throw new Error('expected runner');
    for (const key of ['host', 'port', 'token', 'runJobs']) expect(parsed.options).not.toHaveProperty(key);
  });

  it.each([['--no-run-jobs'], ['--host=0.0.0.0'], ['--port=1'], ['--token=t']])('refuses %s', (flag) => {
    const name = flag.replace(/=.*$/, '');
    expect(refusal(['runner', flag])).toBe(`${name} is for "graphrun serve": a runner serves no HTTP and always runs jobs.`);
  });

  it('refuses what serve refuses in the shared options', () => {
    expect(refusal(['runner', '--database', './x.db'])).toMatch(/^--database takes a postgres:\/\//);
    expect(refusal(['runner', '--blobs', 's3://'])).toMatch(/^--blobs names no bucket/);
    expect(refusal(['runner', '--threads', '0'])).toMatch(/^--threads must be a whole number/);
  });
});

it('--help names both commands and every new flag and variable', () => {
  for (const name of [
    'graphrun runner',
    '--database',
    'GRAPHRUN_DATABASE_URL',
    '--blobs',
    'GRAPHRUN_BLOBS_URL',
    's3://bucket/prefix',
    'AWS_ACCESS_KEY_ID',
    'AWS_ENDPOINT_URL_S3',
    '--no-run-jobs',
    'GRAPHRUN_RUN_JOBS',
  ]) {
    expect(USAGE).toContain(name);
  }
});
