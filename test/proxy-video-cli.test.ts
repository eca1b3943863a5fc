// `graphrun serve` end to end for the video endpoint: the one outbound switch
// (--allow-private-urls) that governs LoadImageFromURL governs video key
// frames and callbacks too. Without it a loopback callback_url is refused
// at once (400); with it the task runs and its callbacks arrive.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { multiframe, solidPng, startReceiver, type Receiver } from './helpers/video.ts';

const BIN = new URL('../bin/graphrun.js', import.meta.url).pathname;
const dirs: string[] = [];
const children: ChildProcess[] = [];
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver({ files: { '/key.png': solidPng(2, 2, [0, 128, 255]) } });
});
afterAll(async () => {
  await receiver.close();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function serve(args: string[]): Promise<{ url: string; stop(): Promise<number | null> }> {
  const data = await mkdtemp(join(tmpdir(), 'graphrun-cli-video-'));
  dirs.push(data);
  const env = { ...process.env };
  delete env.GRAPHRUN_ALLOW_PRIVATE_URLS;
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', data, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /graphrun listening on (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const post = (base: string, body: unknown) =>
  fetch(`${base}/proxy/videogen/multiframe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('graphrun serve: the outbound switch and the video endpoint', () => {
  it('refuses loopback key frames and callbacks by default', async () => {
    const cli = await serve([]);
    const res = await post(cli.url, multiframe({ callback_url: `${receiver.url}/hook`, image_settings: [{ key_image: `${receiver.url}/key.png` }, { key_image: `${receiver.url}/key.png` }] }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.details).toHaveLength(3);
    expect(body.details.every((d: string) => /refusing to fetch 127\.0\.0\.1:\d+: it is a loopback address/.test(d))).toBe(true);
    expect(await cli.stop()).toBe(0);
  });

  it('with --allow-private-urls fetches the key frames and delivers the callbacks', async () => {
    receiver.received.length = 0;
    const cli = await serve(['--allow-private-urls']);
    const res = await post(cli.url, multiframe({ callback_url: `${receiver.url}/hook`, image_settings: [{ key_image: `${receiver.url}/key.png`, duration: 1 }, { key_image: `${receiver.url}/key.png`, duration: 1 }] }));
    expect(res.status).toBe(200);
    const got = await receiver.waitFor(3);
    expect(got.map((c) => c.body.state)).toEqual(['queueing', 'processing', 'success']);
    expect(got[2].body.output.content_type).toBe('image/apng');
    const video = await fetch(got[2].body.output.url);
    expect(video.status).toBe(200);
    expect(await cli.stop()).toBe(0);
  });
});
