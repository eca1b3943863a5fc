// How a pool of engine servers routes and warms up, from the command line:
// --warmup, --routing and --affinity-wait-ms (and their variables) for the
// deployment the flags configure, "warmup", "routing" and "affinityWaitMs"
// per deployment of a --deployments file; refused without workers, and
// handed to the worker engine as its options.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CliUsageError, parseCliArgs } from '../adapters/node/cli-options.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphrun-pool-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WARMUP = { '1': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'sdxl.safetensors' } } };
const write = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const warmupFile = write('warmup.json', WARMUP);

const options = (argv: string[], env: Record<string, string> = {}) => {
  const parsed = parseCliArgs(argv, env);
  if (parsed.command === 'help') throw new Error('expected serve or runner');
  return parsed.options;
};
const refusal = (argv: string[], env: Record<string, string> = {}): string => {
  try {
    options(argv, env);
  } catch (err) {
    expect(err).toBeInstanceOf(CliUsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${argv.join(' ')}`);
};
const WORKER = ['--worker', 'http://gpu-1:8188'];

describe('pool flags', () => {
  it('are empty by default', () => {
    expect(options(['serve', ...WORKER]).pool).toEqual({});
  });

  it('read the warm-up file (bare or in a prompt wrapper), the routing and the wait, flags over variables', () => {
    const wrapped = write('wrapped.json', { prompt: WARMUP });
    expect(options(['serve', ...WORKER, '--warmup', warmupFile, '--routing', 'least-loaded', '--affinity-wait-ms', '0']).pool).toEqual({
      warmup: WARMUP,
      routing: 'least-loaded',
      affinityWaitMs: 0,
    });
    const env = { GRAPHRUN_WARMUP: wrapped, GRAPHRUN_ROUTING: 'affinity', GRAPHRUN_AFFINITY_WAIT_MS: '12000' };
    expect(options(['runner', ...WORKER], env).pool).toEqual({ warmup: WARMUP, routing: 'affinity', affinityWaitMs: 12000 });
    expect(options(['runner', ...WORKER, '--routing', 'least-loaded'], env).pool.routing).toBe('least-loaded');
  });

  it('refuse a missing or malformed warm-up, an unknown routing and a wait out of bounds', () => {
    expect(refusal(['serve', ...WORKER, '--warmup', join(dir, 'none.json')])).toMatch(
      /--warmup: cannot read the warm-up workflow .*none\.json: no such file/,
    );
    expect(refusal(['serve', ...WORKER, '--warmup', write('bad.json', '{')])).toMatch(/--warmup: cannot read the warm-up workflow .*: not JSON/);
    expect(refusal(['serve', ...WORKER, '--warmup', write('list.json', [1])])).toMatch(
      /must be an API-format workflow: it is no JSON object of nodes/,
    );
    expect(refusal(['serve', ...WORKER, '--warmup', write('node.json', { '1': { inputs: {} } })])).toMatch(
      /its node "1" has no class_type and inputs/,
    );
    expect(refusal(['serve', ...WORKER, '--routing', 'random'])).toBe('--routing must be affinity or least-loaded, got "random".');
    expect(refusal(['serve', ...WORKER], { GRAPHRUN_AFFINITY_WAIT_MS: '-1' })).toBe(
      'GRAPHRUN_AFFINITY_WAIT_MS must be a whole number of milliseconds from 0 to 600000, got "-1".',
    );
    expect(refusal(['serve', ...WORKER, '--affinity-wait-ms', '600001'])).toMatch(/^--affinity-wait-ms must be a whole number/);
  });

  it('are refused without workers, naming the flag', () => {
    expect(refusal(['serve', '--warmup', warmupFile])).toBe(
      '--warmup is for a pool of engine servers, and the deployment the flags configure has no workers.',
    );
    expect(refusal(['serve'], { GRAPHRUN_ROUTING: 'affinity' })).toBe(
      'GRAPHRUN_ROUTING is for a pool of engine servers, and the deployment the flags configure has no workers.',
    );
  });
});

describe('pool keys of a --deployments entry', () => {
  const deployments = (entry: Record<string, unknown>) =>
    write(`d-${Math.random().toString(36).slice(2)}.json`, { deployments: [{ id: 'sdxl', ...entry }] });

  it('are read per deployment, the warm-up file relative to the deployments file', () => {
    const file = deployments({ workers: ['http://gpu-2:8188'], warmup: 'warmup.json', routing: 'least-loaded', affinityWaitMs: 2500 });
    const [d] = options(['serve', '--deployments', file]).deployments!.deployments;
    expect(d.pool).toEqual({ warmup: WARMUP, routing: 'least-loaded', affinityWaitMs: 2500 });
    expect(options(['serve', '--deployments', deployments({ workers: ['http://gpu-2:8188'] })]).deployments!.deployments[0].pool).toEqual({});
  });

  it('are refused without workers or when malformed, naming the entry', () => {
    expect(refusal(['serve', '--deployments', deployments({ routing: 'affinity' })])).toMatch(
      /deployments\[0\]\.routing is for a pool of engine servers, and deployment "sdxl" has no workers/,
    );
    expect(refusal(['serve', '--deployments', deployments({ workers: ['http://gpu-2:8188'], warmup: 3 })])).toMatch(
      /deployments\[0\]\.warmup must be the path of a workflow file/,
    );
    expect(refusal(['serve', '--deployments', deployments({ workers: ['http://gpu-2:8188'], warmup: 'none.json' })])).toMatch(
      /deployments\[0\]\.warmup: cannot read the warm-up workflow .*none\.json: no such file/,
    );
    expect(refusal(['serve', '--deployments', deployments({ workers: ['http://gpu-2:8188'], affinityWaitMs: 1.5 })])).toMatch(
      /deployments\[0\]\.affinityWaitMs must be a whole number of milliseconds/,
    );
  });
});
