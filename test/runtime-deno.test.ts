// The runtime conformance suite on Deno (its npm package): the Deno adapter
// over node:sqlite and fs blobs, in a child process per server. Deno runs
// offline: packages come from the project's node_modules, nothing is fetched,
// no lock file is written, its cache lives in the OS temp directory.
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runtimeConformance } from './suites/runtime-conformance.ts';
import { ROOT, spawnServer } from './runtime/spawn-server.ts';

const DENO = join(ROOT, 'node_modules/.bin/deno');
const env = { DENO_DIR: join(tmpdir(), 'graphrun-deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
const OFFLINE = ['--no-remote', '--cached-only', '--no-lock', '--node-modules-dir=manual', '--no-prompt'];
const version = execFileSync(DENO, ['--version'], { encoding: 'utf8', env: { ...process.env, ...env } }).split('\n')[0].trim();

runtimeConformance(version, (opts = {}) =>
  spawnServer({ command: DENO, args: ['run', '-A', ...OFFLINE, 'test/runtime/deno-server.ts'], env, token: opts.token }),
);
