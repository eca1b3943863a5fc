// A video task from POST to success with the local provider: the states a
// poller sees, the output video (decoded: frames, size, timing, pixels),
// callbacks received by a real HTTP server in order and retried with
// backoff, the outbound policy at delivery, key frames by URL and base64,
// and a task a restart interrupted resumed from its durable row.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createService, type Logger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { type Harness, MODES, startHarness } from './helpers/harness.ts';
import {
  BLUE,
  createTask,
  fetchOutput,
  GREEN,
  multiframe,
  postTask,
  RED,
  type Receiver,
  solidPng,
  startReceiver,
  taskPath,
  waitForTask,
} from './helpers/video.ts';

const pixel = (f: { width: number; rgb: Uint8Array }, x: number, y: number) =>
  Array.from(f.rgb.subarray((y * f.width + x) * 3, (y * f.width + x) * 3 + 3));

function captureLogger(): Logger & { lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
async function receiver(options: Parameters<typeof startReceiver>[0] = {}) {
  const r = await startReceiver(options);
  receivers.push(r);
  return r;
}

describe.each(MODES)('video task lifecycle (%s)', (mode) => {
  let h: Harness;
  const logger = captureLogger();
  beforeAll(async () => {
    h = await startHarness(mode, { allowPrivateUrls: true, logger, videoCallbacks: { initialDelayMs: 200, attempts: 3 } });
  });
  afterAll(() => h.close());

  it('runs to success; the output is an APNG of the planned frames, size and timing', async () => {
    const created = await createTask(h, multiframe());
    const { task, seen } = await waitForTask(h, created.task_id);
    expect(task.state).toBe('success');
    // A poller may miss a short state, never see them out of order.
    const order = ['created', 'queueing', 'processing', 'success'];
    expect(seen.map((s) => order.indexOf(s))).toEqual([...seen.map((s) => order.indexOf(s))].sort());
    expect(task).toMatchObject({
      task_id: created.task_id,
      credits: created.credits,
      created_at: created.created_at,
      image_settings: created.image_settings,
    });
    expect(task.output).toMatchObject({
      content_type: 'image/apng',
      file_path: `videogen-${created.task_id}.apng`,
      hash: expect.stringMatching(/^blake3:[0-9a-f]{64}$/),
      url_expires_at: expect.any(String),
    });
    const { apng, contentType } = await fetchOutput(h, task);
    expect(contentType).toBe('image/apng');
    // 540p; red held 1 s, then 1 s crossfade at 8 fps into blue, held 0.5 s more.
    expect({ width: apng.width, height: apng.height, frames: apng.frames.length, ms: apng.durationMs, plays: apng.plays }).toEqual({
      width: 960,
      height: 540,
      frames: 9,
      ms: 2500,
      plays: 1,
    });
    expect(apng.frames.map((f) => f.delayMs)).toEqual([1000, 125, 125, 125, 125, 125, 125, 125, 625]);
    expect(pixel(apng.frames[0], 480, 270)).toEqual([255, 0, 0]);
    expect(pixel(apng.frames[8], 480, 270)).toEqual([0, 0, 255]);
  });

  it('POSTs every state change to callback_url in order, the last with the output', async () => {
    const r = await receiver();
    const created = await createTask(h, multiframe({ callback_url: `${r.url}/hook?task=1` }));
    const got = await r.waitFor(3);
    expect(got.map((c) => c.body.state)).toEqual(['queueing', 'processing', 'success']);
    for (const c of got) {
      expect(c.path).toBe('/hook?task=1');
      expect(c.headers['content-type']).toBe('application/json');
      expect(c.body).toMatchObject({
        task_id: created.task_id,
        credits: created.credits,
        model: 'gen-q2-turbo',
        callback_url: `${r.url}/hook?task=1`,
      });
    }
    expect(got[0].body.output).toBeUndefined();
    // The success body carries a signed URL that works without credentials.
    const { apng } = await fetchOutput(h, got[2].body);
    expect(apng.frames).toHaveLength(9);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.received).toHaveLength(3);
  });

  it('retries a failed delivery with backoff before sending the next state', async () => {
    const r = await receiver({ status: (n) => (n === 1 ? 500 : 200) });
    await createTask(h, multiframe({ callback_url: `${r.url}/hook` }));
    const got = await r.waitFor(4);
    expect(got.map((c) => c.body.state)).toEqual(['queueing', 'queueing', 'processing', 'success']);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(190);
    expect(
      logger.lines.some((l) => l.message === 'video callback failed; retrying' && l.fields?.error === 'HTTP 500' && l.fields?.retry_in_ms === 200),
    ).toBe(true);
  });

  it('gives up after the configured tries, doubling the delay, and the task still succeeds', async () => {
    const r = await receiver({ status: () => 503 });
    const created = await createTask(h, multiframe({ callback_url: `${r.url}/down` }));
    expect((await waitForTask(h, created.task_id)).task.state).toBe('success');
    const got = await r.waitFor(9, 30_000);
    expect(got.map((c) => c.body.state)).toEqual([
      'queueing',
      'queueing',
      'queueing',
      'processing',
      'processing',
      'processing',
      'success',
      'success',
      'success',
    ]);
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(390);
    const gaveUpLines = () => logger.lines.filter((l) => l.message === 'video callback given up' && l.fields?.task_id === created.task_id);
    // The last give-up is logged just after the receiver answered.
    for (const deadline = Date.now() + 5000; gaveUpLines().length < 3 && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 10));
    const gaveUp = gaveUpLines();
    expect(gaveUp.map((l) => l.fields?.state)).toEqual(['queueing', 'processing', 'success']);
  });

  it('loads key frames by URL through the guard (the switch is on here) and as data URIs', async () => {
    const r = await receiver({ files: { '/red.png': solidPng(4, 2, [255, 0, 0]), '/green.png': solidPng(3, 3, [0, 255, 0]) } });
    const created = await createTask(h, {
      model: 'gen-q2-turbo',
      resolution: '540p',
      start_image: `${r.url}/green.png`,
      image_settings: [
        { key_image: `${r.url}/red.png`, duration: 1 },
        { key_image: `data:image/png;base64,${BLUE}`, duration: 1 },
      ],
    });
    const { task } = await waitForTask(h, created.task_id);
    expect(task.state).toBe('success');
    expect(r.gets.sort()).toEqual(['/green.png', '/red.png']);
    const { apng } = await fetchOutput(h, task);
    // green -> red -> blue: two crossfade segments of 8 frames.
    expect(apng.frames).toHaveLength(16);
    expect(apng.durationMs).toBe(2000);
    expect(pixel(apng.frames[0], 480, 270)).toEqual([32, 223, 0]);
    expect(pixel(apng.frames[7], 480, 270)).toEqual([255, 0, 0]);
    expect(pixel(apng.frames[15], 480, 270)).toEqual([0, 0, 255]);
  });

  it('fails the task, naming the key frame, when its URL cannot be loaded', async () => {
    const r = await receiver({ files: {} });
    const created = await createTask(h, multiframe({ image_settings: [{ key_image: RED }, { key_image: `${r.url}/missing.png` }] }));
    const { task } = await waitForTask(h, created.task_id);
    expect(task.state).toBe('failed');
    expect(task.error).toEqual({
      message: 'The video could not be generated.',
      details: [`image_settings[1].key_image: HTTP 404 from ${new URL(r.url).host}`],
    });
    expect(task.output).toBeUndefined();
  });
});

describe('outbound policy at delivery time', () => {
  let h: Harness;
  const logger = captureLogger();
  // The name is public when the request is checked and private when the callback goes out (DNS rebinding).
  let answer = '93.184.216.34';
  beforeAll(async () => {
    h = await startHarness('in-process', { logger, resolveHost: async () => [answer] });
  });
  afterAll(() => h.close());

  it('refuses a callback name that resolves into the private network, at the POST and at delivery', async () => {
    answer = '10.0.0.7';
    const res = await postTask(h, multiframe({ callback_url: 'http://hooks.example.com/x' }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).details).toEqual([
      'callback_url: refusing to fetch hooks.example.com: it resolves to 10.0.0.7, a private address (private, loopback and link-local addresses are not allowed on this service)',
    ]);

    answer = '93.184.216.34';
    const created = await createTask(h, multiframe({ callback_url: 'http://hooks.example.com/x' }));
    answer = '127.0.0.1';
    expect((await waitForTask(h, created.task_id)).task.state).toBe('success');
    await h.service.idle();
    const deadline = Date.now() + 5000;
    while (logger.lines.filter((l) => l.message === 'video callback refused by the outbound guard').length < 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const refusals = logger.lines.filter((l) => l.message === 'video callback refused by the outbound guard');
    expect(refusals.map((l) => l.fields?.state)).toEqual(['queueing', 'processing', 'success']);
    expect(refusals[0].fields?.error).toBe('refusing to fetch hooks.example.com: it resolves to 127.0.0.1, a loopback address');
  });
});

describe('durable tasks', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'graphrun-video-durable-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function open(before?: (storage: Awaited<ReturnType<typeof createSqliteStorage>>) => Promise<void>) {
    const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
    const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });
    await before?.(storage);
    return createService({ storage, logger: captureLogger(), sweepIntervalMs: 0 });
  }
  const call = (service: Awaited<ReturnType<typeof createService>>, path: string, body?: unknown) =>
    service.fetch(
      new Request(
        `http://graphrun.test${path}`,
        body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
      ),
    );

  it('a task left open by a stop is resumed by the next start and completes', async () => {
    const first = await open();
    const created = (await (await call(first, '/proxy/videogen/multiframe', multiframe({ start_image: GREEN }))).json()) as any;
    expect(created.state).toBe('created');
    // Stopped at once: the render, if it started, is abandoned with the process's memory.
    await first.close();

    const second = await open(async (storage) => {
      const row = await storage.metadata.getVideoTask('local', created.task_id);
      expect(['created', 'queueing', 'processing']).toContain(row?.state);
    });
    const deadline = Date.now() + 20_000;
    let task: any;
    do {
      task = await (await call(second, taskPath(created.task_id))).json();
      if (task.state === 'success' || task.state === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    } while (Date.now() < deadline);
    expect(task.state).toBe('success');
    const content = await second.fetch(new Request(task.output.url));
    expect(content.status).toBe(200);
    expect((await content.arrayBuffer()).byteLength).toBe(task.output.size_bytes);
    await second.close();
  });
});
