// How the tests start Deno offline: packages from the project's node_modules,
// nothing fetched, no lock file written, its cache in the OS temp directory.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './spawn-server.ts';

export const DENO = join(ROOT, 'node_modules/.bin/deno');
export const DENO_ENV = { DENO_DIR: join(tmpdir(), 'graphrun-deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
export const DENO_OFFLINE = ['--no-remote', '--cached-only', '--no-lock', '--node-modules-dir=manual', '--no-prompt'];
