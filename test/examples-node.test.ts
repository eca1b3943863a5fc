// The Node examples run as a user runs them (`npx tsx examples/<name>.ts`,
// GRAPHRUN_PORT=0, GRAPHRUN_DATA in a temporary directory): each server
// prints its URL, examples/client.ts uploads, submits, follows and downloads
// against it, exiting 0 with the output on disk; SIGTERM stops the server.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PNG_SIGNATURE, sleep } from './helpers/jobs.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const started: ChildProcess[] = [];
const dirs: string[] = [];

/** Each example in its own process group, so it and the processes npx starts for it can be stopped together. */
function npxTsx(file: string, args: string[], env: Record<string, string>) {
  const child = spawn('npx', ['tsx', file, ...args], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

const groupAlive = (pid: number) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  for (const child of started) if (child.pid && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('examples/client.ts --help', () => {
  it('prints its usage and exits 0, naming its arguments, environment and default output directory; wrong arguments exit 2', async () => {
    const help = npxTsx('examples/client.ts', ['--help'], {});
    const code = await help.exited;
    const { stdout, stderr } = help.output();
    expect({ code, stdout, stderr }).toMatchObject({ code: 0 });
    expect(stdout).toMatch(/^Usage: npx tsx examples\/client\.ts \[base-url\]/);
    for (const name of ['base-url', '--image', '--out', 'GRAPHRUN_URL', 'GRAPHRUN_TOKEN']) expect(stdout).toContain(name);
    expect(stdout).toMatch(/--out DIR .*\(default: \.\/outputs\)/);

    // The same text on stderr after the problem, and nothing run.
    const wrong = npxTsx('examples/client.ts', ['--no-such-option'], {});
    expect({ code: await wrong.exited, stdout: wrong.output().stdout }).toEqual({ code: 2, stdout: '' });
    expect(wrong.output().stderr).toMatch(/client: Unknown option '--no-such-option'[\s\S]*Usage: npx tsx examples\/client\.ts/);
  }, 30_000);
});

describe.each(['node-mount', 'express'])('examples/%s.ts', (name) => {
  it('serves under /graph beside the app; examples/client.ts runs a job against it and downloads the output', async () => {
    const dir = await mkdtemp(join(tmpdir(), `graphrun-example-${name}-`));
    dirs.push(dir);
    const data = join(dir, 'data');
    const server = npxTsx(`examples/${name}.ts`, [], { GRAPHRUN_PORT: '0', GRAPHRUN_DATA: data });
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed within 45 s: ${JSON.stringify(server.output())}`)), 45_000);
      server.child.stdout!.on('data', () => {
        const m = /graphrun mounted at (http:\/\/\S+)/.exec(server.output().stdout);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void server.exited.then((code) => reject(new Error(`server exited ${code}: ${JSON.stringify(server.output())}`)));
    });
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graph$/);
    const origin = new URL(base).origin;

    // The app's own route is still the app's.
    const home = await fetch(`${origin}/`);
    expect(home.status).toBe(200);
    expect(await home.text()).toMatch(/The app itself/);

    const out = join(dir, 'out');
    const client = npxTsx('examples/client.ts', [base, '--out', out], {});
    const code = await client.exited;
    expect({ code, ...client.output() }).toMatchObject({ code: 0 });
    const { stdout } = client.output();
    expect(stdout).toMatch(/uploaded sample\.png: asset [0-9a-f-]{36}/);
    expect(stdout).toMatch(/status: succeeded/);
    expect(stdout).toMatch(/saved .*client_00001_\.png \(\d+ bytes, image\/png\)/);

    const files = await readdir(out);
    expect(files).toEqual(['client_00001_.png']);
    const png = await readFile(join(out, files[0]!));
    expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    // IHDR: the 8x8 sample scaled to 64 wide keeps its square shape.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([64, 64]);
    // The server persisted under GRAPHRUN_DATA.
    expect(await readdir(data)).toEqual(expect.arrayContaining(['blobs', 'graphrun.db']));

    // SIGTERM: the example closes its server and the service, and every process of the group ends.
    process.kill(-server.child.pid!, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (groupAlive(server.child.pid!) && Date.now() < deadline) await sleep(100);
    expect(groupAlive(server.child.pid!)).toBe(false);
  }, 90_000);
});
