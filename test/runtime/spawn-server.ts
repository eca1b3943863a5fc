// Starts a runtime's test server entry as a child process for the runtime
// conformance suite: a fresh data directory each, the URL read from its
// stdout, and on close SIGTERM, then SIGKILL if it lingers, then the directory removed.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RuntimeServer } from '../suites/runtime-conformance.ts';

export const ROOT = new URL('../..', import.meta.url).pathname;

export interface SpawnOptions {
  command: string;
  args: string[];
  env?: Record<string, string>;
  token?: string;
  /** Startup time allowed, ms. */
  timeoutMs?: number;
}

export async function spawnServer(opts: SpawnOptions): Promise<RuntimeServer> {
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-runtime-'));
  const child = spawn(opts.command, opts.args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env, GRAPHRUN_DATA: dir, GRAPHRUN_TOKEN: opts.token ?? '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${opts.command} did not print its URL in time; output:\n${output}`)), opts.timeoutMs ?? 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${opts.command} exited (${code}) before listening; output:\n${output}`));
    });
  });
  return {
    base: url,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(kill);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
