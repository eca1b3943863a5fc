// The `graphrun` command in its own process, for the CLI end-to-end tests:
// its output collected, its URL read from the `graphrun listening on` line,
// and (through cliCommands) a fresh --data directory per start, no process
// outliving its test and no directory outliving its file. It runs the CLI's
// source through tsx, so these tests check the code as it is now, never a
// build of it that may be stale; bin/graphrun.js, which runs the build on
// plain node, is checked installed from the tarball (package-consumer.test.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';

/** The CLI's source: run directly, it calls its main() (as bin/graphrun.js does with the build). */
export const CLI = new URL('../../adapters/node/cli.ts', import.meta.url).pathname;

export interface CliProcess {
  child: ChildProcess;
  /** The URL it printed; rejects with its stderr when it exits first. */
  url: Promise<string>;
  /** The first match of `pattern` in what it printed on stdout; rejects with its stderr when it exits first. */
  printed(pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * What an operator's own environment may set that a spawned CLI must not
 * bring in: tests that say where storage is, what runs the jobs and which
 * files and tokens count pass these as `unset`.
 */
export const OPERATOR_ENV: readonly string[] = [
  'GRAPHRUN_DATA',
  'GRAPHRUN_DATABASE_URL',
  'GRAPHRUN_BLOBS_URL',
  'GRAPHRUN_RUN_JOBS',
  'GRAPHRUN_TOKEN',
  'GRAPHRUN_OPERATOR_TOKEN',
  'GRAPHRUN_URL',
  'GRAPHRUN_WORKERS',
  'GRAPHRUN_THREADS',
  'GRAPHRUN_DEPLOYMENTS',
  'GRAPHRUN_WEBHOOKS',
  'AWS_SESSION_TOKEN',
  'AWS_ENDPOINT_URL',
  'AWS_DEFAULT_REGION',
];

/**
 * `node --import tsx adapters/node/cli.ts <args>` (`graphrun <args>`) with `env` over this process's environment.
 * The variables named in `unset` are removed unless `env` sets them: the test
 * decides, an operator's own setting must not leak in.
 */
export function spawnCli(args: string[], env: Record<string, string> = {}, unset: readonly string[] = []): CliProcess {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  for (const name of unset) if (!(name in env)) delete childEnv[name];
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  // 'close' rather than 'exit': by then all it wrote has been read, so its last words are in stdout and stderr.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const printed = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const look = () => {
        const m = pattern.exec(stdout);
        if (m) resolve(m);
        return m !== null;
      };
      if (look()) return;
      const onData = () => {
        if (look()) child.stdout!.off('data', onData);
      };
      // Added after the listener that collects stdout, so `stdout` already holds the chunk.
      child.stdout!.on('data', onData);
      void exited.then((code) => reject(new Error(`exited ${code} before printing ${pattern}: ${stderr}`)));
    });
  child.stdout!.on('data', (d) => (stdout += d));
  const url = printed(/graphrun listening on (http:\/\/\S+)/).then((m) => m[1]);
  // A test expecting a failed start may never read `url`: its rejection is not unhandled.
  url.catch(() => undefined);
  return {
    child,
    url,
    printed,
    exited,
    output: () => ({ stdout, stderr }),
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * For one test file: a function starting `graphrun <command> --data <dir>`
 * (`serve` also gets `--port 0`; a new directory named after `prefix` each
 * time) with more `args`. Every CLI it started is killed after each test,
 * its directories removed after all.
 */
export function cliCommands(
  prefix: string,
  unset: readonly string[] = [],
): (command: 'serve' | 'runner', args?: string[], env?: Record<string, string>) => Promise<CliProcess & { data: string }> {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });
  return async (command, args = [], env = {}) => {
    const data = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(data);
    const listen = command === 'serve' ? ['--port', '0'] : [];
    const cli = spawnCli([command, ...listen, '--data', data, ...args], env, unset);
    children.push(cli.child);
    return { ...cli, data };
  };
}

/** cliCommands for `graphrun serve` alone. */
export function cliServers(prefix: string, unset: readonly string[] = []): (args?: string[], env?: Record<string, string>) => Promise<CliProcess> {
  const start = cliCommands(prefix, unset);
  return (args, env) => start('serve', args, env);
}
