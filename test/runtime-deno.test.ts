// The runtime conformance suite on Deno (its npm package): the Deno adapter
// over node:sqlite and fs blobs, in a child process per server, offline.
import { execFileSync } from 'node:child_process';
import { DENO, DENO_ENV, DENO_OFFLINE } from './runtime/deno-env.ts';
import { spawnServer } from './runtime/spawn-server.ts';
import { runtimeConformance } from './suites/runtime-conformance.ts';

const version = execFileSync(DENO, ['--version'], { encoding: 'utf8', env: { ...process.env, ...DENO_ENV } })
  .split('\n')[0]
  .trim();

runtimeConformance(version, (opts = {}) =>
  spawnServer({ command: DENO, args: ['run', '-A', ...DENO_OFFLINE, 'test/runtime/deno-server.ts'], env: DENO_ENV, token: opts.token }),
);
