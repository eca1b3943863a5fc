// `graphrun serve --music-upstream <url>` end to end: the CLI forwards music
// generation to the vendor with the token from GRAPHRUN_MUSIC_UPSTREAM_TOKEN,
// and the vendor's stream reaches the client; without the token it exits 2.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMusicVendor, type FakeMusicVendor } from './fakes/vendor-music.ts';
import { expectWav, MUSIC_PATH, musicForm, readMusic } from './helpers/music.ts';

const BIN = new URL('../bin/graphrun.js', import.meta.url).pathname;
const dirs: string[] = [];
const children: ChildProcess[] = [];
let vendor: FakeMusicVendor;

beforeAll(async () => {
  vendor = await startFakeMusicVendor();
});
afterAll(async () => {
  await vendor.close();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function start(args: string[], env: Record<string, string>) {
  const data = await mkdtemp(join(tmpdir(), 'graphrun-cli-upstream-'));
  dirs.push(data);
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  for (const name of ['GRAPHRUN_MUSIC_UPSTREAM_URL', 'GRAPHRUN_VIDEO_UPSTREAM_URL']) if (!(name in env)) delete childEnv[name];
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', data, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /graphrun listening on (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return { url, exited, child, stderr: () => stderr };
}

describe('graphrun serve --music-upstream', () => {
  it('forwards generation to the vendor with its token; the client reads the vendor stream', async () => {
    const cli = await start(['--music-upstream', vendor.url], { GRAPHRUN_MUSIC_UPSTREAM_TOKEN: vendor.token });
    const base = await cli.url;
    expect(cli.stderr()).toContain(`music generation forwarded to ${vendor.url}`);
    const before = vendor.requests.length;
    const res = await fetch(`${base}${MUSIC_PATH}`, { method: 'POST', body: musicForm({ prompt: 'upstream organ drone', duration: '1.5' }) });
    const music = await readMusic(res);
    expectWav(music.wav, 1.5);
    expect(vendor.requests.slice(before)).toEqual([expect.objectContaining({ authorization: `Bearer ${vendor.token}`, prompt: 'upstream organ drone', duration: '1.5' })]);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('exits 2 when the token variable is missing', async () => {
    const cli = await start(['--music-upstream', vendor.url], {});
    await cli.url.catch(() => undefined);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toMatch(/GRAPHRUN_MUSIC_UPSTREAM_TOKEN/);
  });
});
