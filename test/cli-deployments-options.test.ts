// `--deployments <file>` / GRAPHRUN_DEPLOYMENTS parsing: the file read and
// checked whole while the command line is parsed, every mistake a
// CliUsageError naming the file and the entry; and the storage each
// deployment gets, derived from the main storage's flags.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentStorage } from '../adapters/node/cli-deployments.ts';
import { parseDeployments } from '../adapters/node/cli-deployments-options.ts';
import { CliUsageError, parseCliArgs, USAGE } from '../adapters/node/cli-options.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphrun-deployments-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function fileWith(content: unknown): string {
  const path = join(dir, `d${n++}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const options = (argv: string[], env: Record<string, string> = {}) => {
  const parsed = parseCliArgs(argv, env);
  if (parsed.command === 'help') throw new Error('expected serve or runner');
  return parsed.options;
};

const AS_FLAGS = { database: false, defaultWorkers: [] };
function refusal(content: unknown, flags: { database: boolean; defaultWorkers: string[] } = AS_FLAGS): string {
  try {
    parseDeployments(content, '--deployments d.json', flags);
  } catch (err) {
    expect(err).toBeInstanceOf(CliUsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(content)}`);
}

describe('--deployments', () => {
  it('is unset by default: only the deployment the flags configure', () => {
    expect(options(['serve']).deployments).toBeUndefined();
    expect(options(['runner'], { GRAPHRUN_DEPLOYMENTS: '' }).deployments).toBeUndefined();
  });

  it('reads the file for serve and runner, from the flag over the variable', () => {
    const file = fileWith({
      baseDomains: ['Run.Example.com.'],
      stagingDomains: ['stg.run.example.com'],
      pathPrefix: '/d/',
      deployments: [
        { id: 'sdxl', staging: false, workers: ['http://gpu-1:8188/', 'https://gpu-2.example:443'] },
        { id: 'flux-dev', staging: true, threads: 2 },
        { id: 'small' },
      ],
    });
    const expected = {
      file,
      baseDomains: ['run.example.com'],
      stagingDomains: ['stg.run.example.com'],
      pathPrefix: '/d',
      deployments: [
        { id: 'sdxl', staging: false, workers: ['http://gpu-1:8188', 'https://gpu-2.example:443'], threads: undefined, pool: {} },
        { id: 'flux-dev', staging: true, workers: [], threads: 2, pool: {} },
        { id: 'small', staging: false, workers: [], threads: undefined, pool: {} },
      ],
    };
    expect(options(['serve', '--deployments', file]).deployments).toEqual(expected);
    expect(options(['runner'], { GRAPHRUN_DEPLOYMENTS: file }).deployments).toEqual(expected);
    expect(options(['runner', `--deployments=${file}`], { GRAPHRUN_DEPLOYMENTS: '/nowhere.json' }).deployments).toEqual(expected);
    // The flags still configure 'default' as they did.
    expect(options(['serve', '--deployments', file, '--worker', 'http://gpu-9:8188'])).toMatchObject({ workers: ['http://gpu-9:8188'] });
  });

  it('takes pathPrefix false when every deployment has a domain', () => {
    const file = fileWith({ baseDomains: ['run.example.com'], pathPrefix: false, deployments: [{ id: 'a' }] });
    expect(options(['serve', '--deployments', file]).deployments).toMatchObject({ pathPrefix: false, deployments: [{ id: 'a' }] });
  });

  it('names the flag or the variable when the file cannot be read or is not JSON', () => {
    const missing = join(dir, 'missing.json');
    expect(() => parseCliArgs(['serve', '--deployments', missing])).toThrow(`--deployments: cannot read ${missing}: no such file.`);
    const broken = fileWith('{"deployments": [');
    expect(() => parseCliArgs(['serve'], { GRAPHRUN_DEPLOYMENTS: broken })).toThrow(
      new RegExp(`^GRAPHRUN_DEPLOYMENTS ${broken} is not valid JSON: `),
    );
    expect(() => parseCliArgs(['serve', '--deployments', ''])).toThrow('--deployments must not be empty.');
    expect(() => parseCliArgs(['serve', '--deployments', dir])).toThrow(CliUsageError);
  });

  it.each<[string, unknown, string]>([
    ['not an object', [], 'must be a JSON object with a "deployments" list'],
    [
      'an unknown top-level key',
      { deployments: [{ id: 'a' }], domains: [] },
      'the file has an unknown key "domains" (allowed: baseDomains, stagingDomains, pathPrefix, deployments)',
    ],
    ['no deployments', { baseDomains: ['run.example.com'] }, '"deployments" must be a list of at least one deployment'],
    ['an empty list', { deployments: [] }, '"deployments" must be a list of at least one deployment'],
    [
      'an entry that is no object',
      { deployments: ['sdxl'] },
      'deployments[0] must be an object such as {"id": "sdxl", "workers": ["http://gpu-1:8188"]}',
    ],
    [
      'an unknown entry key',
      { deployments: [{ id: 'a', gpus: 2 }] },
      'deployments[0] has an unknown key "gpus" (allowed: id, staging, workers, threads, warmup, routing, affinityWaitMs)',
    ],
    [
      'no id',
      { deployments: [{ workers: [] }] },
      'deployments[0].id must be one lower-case DNS label (a-z, 0-9 and inner hyphens, at most 63 characters), got undefined',
    ],
    [
      'an upper-case id',
      { deployments: [{ id: 'SDXL' }] },
      'deployments[0].id must be one lower-case DNS label (a-z, 0-9 and inner hyphens, at most 63 characters), got "SDXL"',
    ],
    [
      'a dotted id',
      { deployments: [{ id: 'a.b' }] },
      'deployments[0].id must be one lower-case DNS label (a-z, 0-9 and inner hyphens, at most 63 characters), got "a.b"',
    ],
    [
      'a trailing hyphen',
      { deployments: [{ id: 'a-' }] },
      'deployments[0].id must be one lower-case DNS label (a-z, 0-9 and inner hyphens, at most 63 characters), got "a-"',
    ],
    [
      'a 64-character id',
      { deployments: [{ id: 'a'.repeat(64) }] },
      `deployments[0].id must be one lower-case DNS label (a-z, 0-9 and inner hyphens, at most 63 characters), got "${'a'.repeat(64)}"`,
    ],
    [
      'the id default',
      { deployments: [{ id: 'default' }] },
      'deployments[0].id cannot be "default": that is the deployment the command-line flags configure',
    ],
    ['a duplicate id', { deployments: [{ id: 'a' }, { id: 'a' }] }, 'deployments[1].id "a" is given twice: every deployment needs its own id'],
    ['a non-boolean staging', { deployments: [{ id: 'a', staging: 'yes' }] }, 'deployments[0].staging must be true or false'],
    ['workers that are no list', { deployments: [{ id: 'a', workers: 'http://gpu-1:8188' }] }, 'deployments[0].workers must be a list of strings'],
    [
      'a worker without a scheme',
      { deployments: [{ id: 'a', workers: ['gpu-1:8188'] }] },
      'deployments[0].workers[0] must be an http(s) URL such as http://gpu-1:8188, got "gpu-1:8188"',
    ],
    [
      'a worker with a query',
      { deployments: [{ id: 'a', workers: ['http://gpu-1:8188/?x=1'] }] },
      'deployments[0].workers[0] must be an http(s) URL such as http://gpu-1:8188, got "http://gpu-1:8188/?x=1"',
    ],
    [
      'a worker of two deployments',
      {
        deployments: [
          { id: 'a', workers: ['http://g:1'] },
          { id: 'b', workers: ['http://g:1/'] },
        ],
      },
      'http://g:1 is a worker of both deployment "a" and deployment "b": a worker belongs to one deployment',
    ],
    [
      'threads beside workers',
      { deployments: [{ id: 'a', workers: ['http://g:1'], threads: 2 }] },
      'deployments[0].threads is for the built-in engine, which deployment "a" does not run: it has workers',
    ],
    ['zero threads', { deployments: [{ id: 'a', threads: 0 }] }, 'deployments[0].threads must be a whole number from 1 to 256, got "0"'],
    ['threads as a string', { deployments: [{ id: 'a', threads: '2' }] }, 'deployments[0].threads must be a number from 1 to 256, got "2"'],
    ['fractional threads', { deployments: [{ id: 'a', threads: 1.5 }] }, 'deployments[0].threads must be a whole number from 1 to 256, got "1.5"'],
    [
      'a bad base domain',
      { baseDomains: ['run_example.com'], deployments: [{ id: 'a' }] },
      'baseDomains[0] must be a domain name such as run.example.com, got "run_example.com"',
    ],
    [
      'a one-label domain',
      { stagingDomains: ['localhost'], deployments: [{ id: 'a' }] },
      'stagingDomains[0] must be a domain name such as run.example.com, got "localhost"',
    ],
    ['domains that are no list', { baseDomains: 'run.example.com', deployments: [{ id: 'a' }] }, 'baseDomains must be a list of strings'],
    [
      'a domain both base and staging',
      { baseDomains: ['run.example.com'], stagingDomains: ['RUN.example.com'], deployments: [{ id: 'a' }] },
      'run.example.com is both a base and a staging domain: a host must name one deployment',
    ],
    [
      'a prefix that is no path',
      { pathPrefix: 'deployment', deployments: [{ id: 'a' }] },
      'pathPrefix must be false or a path such as /deployment, got "deployment"',
    ],
    ['pathPrefix true', { pathPrefix: true, deployments: [{ id: 'a' }] }, 'pathPrefix must be false or a path such as /deployment, got true'],
    [
      'a prefix over the API',
      { pathPrefix: '/api', deployments: [{ id: 'a' }] },
      "pathPrefix /api would hide the service's own /api routes: choose another, such as /deployment",
    ],
    [
      'a prefix over /ops',
      { pathPrefix: '/ops/d', deployments: [{ id: 'a' }] },
      "pathPrefix /ops/d would hide the service's own /ops routes: choose another, such as /deployment",
    ],
    [
      'a deployment nothing reaches',
      { pathPrefix: false, baseDomains: ['run.example.com'], deployments: [{ id: 'a', staging: true }] },
      'deployment "a" cannot be reached: pathPrefix is false and there are no stagingDomains',
    ],
  ])('refuses %s', (_, content, message) => {
    expect(refusal(content)).toBe(`--deployments d.json: ${message}.`);
  });

  it("refuses a worker --worker gives 'default' already, and ids too long for a PostgreSQL schema", () => {
    expect(refusal({ deployments: [{ id: 'a', workers: ['http://g:1'] }] }, { database: false, defaultWorkers: ['http://g:1'] })).toBe(
      '--deployments d.json: http://g:1 is a worker of both default (--worker) and deployment "a": a worker belongs to one deployment.',
    );
    const long = 'a'.repeat(53);
    expect(refusal({ deployments: [{ id: long }] }, { database: true, defaultWorkers: [] })).toBe(
      `--deployments d.json: deployments[0].id "${long}" is too long for its PostgreSQL schema deployment_${long}: at most 52 characters.`,
    );
    // Only on PostgreSQL: a SQLite directory takes it.
    expect(parseDeployments({ deployments: [{ id: long }] }, 'f', AS_FLAGS).deployments[0].id).toBe(long);
    const file = fileWith({ deployments: [{ id: 'a', workers: ['http://g:1'] }] });
    expect(() => parseCliArgs(['runner', '--deployments', file], { GRAPHRUN_WORKERS: 'http://g:1' })).toThrow(/a worker belongs to one deployment/);
  });

  it('is in the usage', () => {
    for (const name of ['--deployments', 'GRAPHRUN_DEPLOYMENTS', 'graphrun deployments', '--deployment <id>']) expect(USAGE).toContain(name);
  });
});

describe("a deployment's storage", () => {
  const s3env = { credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };

  it('SQLite and blob files: <data>/deployments/<id>', () => {
    expect(deploymentStorage({ data: '/var/lib/graphrun', database: undefined, blobs: undefined }, 'sdxl')).toEqual({
      data: '/var/lib/graphrun/deployments/sdxl',
      database: undefined,
      blobs: undefined,
    });
  });

  it('PostgreSQL: the same database, schema deployment_<id> with - as _', () => {
    expect(deploymentStorage({ data: 'data', database: 'postgres://db/g', blobs: undefined }, 'flux-dev-2')).toEqual({
      data: join('data', 'deployments', 'flux-dev-2'),
      database: 'postgres://db/g',
      blobs: undefined,
      schema: 'deployment_flux_dev_2',
    });
  });

  it('a --blobs directory: <dir>/deployments/<id>; a bucket: <prefix>deployments/<id>/', () => {
    expect(deploymentStorage({ data: 'd', database: undefined, blobs: { kind: 'dir', dir: '/blobs' } }, 'a').blobs).toEqual({
      kind: 'dir',
      dir: '/blobs/deployments/a',
    });
    expect(
      deploymentStorage({ data: 'd', database: 'postgres://db/g', blobs: { kind: 's3', bucket: 'b', prefix: 'graphrun/', env: s3env } }, 'a').blobs,
    ).toEqual({
      kind: 's3',
      bucket: 'b',
      prefix: 'graphrun/deployments/a/',
      env: s3env,
    });
    expect(
      deploymentStorage({ data: 'd', database: undefined, blobs: { kind: 's3', bucket: 'b', prefix: '', env: s3env } }, 'a').blobs,
    ).toMatchObject({
      prefix: 'deployments/a/',
    });
  });
});
