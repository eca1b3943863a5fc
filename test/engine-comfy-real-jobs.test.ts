// Jobs of the worker engine on real engine servers (ComfyUI, CPU, started by
// the test through ../shared/comfyui/run-comfyui.sh), through the v2 API: an
// uploaded input staged onto the server, video and audio outputs, cancel of
// a queued and of a running job, and two jobs at once on a pool of two
// servers and of one. Inputs are unique per run: the servers cache identical
// prompts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodePng } from '../lib/png/index.ts';
import { upload } from './helpers/assets.ts';
import { assetRef, cancelJob, jobNow, submitOk } from './helpers/jobs.ts';
import { type RealComfyUI, startRealComfyUI } from './helpers/real-comfyui.ts';
import {
  blurChain,
  download,
  ended,
  eventually,
  type HistoryEntry,
  historyOf,
  messageOf,
  nodeRuns,
  pixelsOff,
  queueOf,
  type RealService,
  serviceOn,
  TEST_MS,
} from './helpers/real-jobs.ts';
import { invertChain, pixelsOf, rgbOf, uniqueColor } from './suites/engine-fixtures.ts';

let a: RealComfyUI;
let b: RealComfyUI;
beforeAll(async () => {
  // Both kept even if one fails to start, so that afterAll stops the other.
  const started = await Promise.allSettled([startRealComfyUI(), startRealComfyUI()]);
  [a, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined)) as RealComfyUI[];
  for (const s of started) if (s.status === 'rejected') throw s.reason;
}, 20 * 60_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

let services: RealService[] = [];
afterEach(async () => {
  for (const s of services) await s.close();
  services = [];
});
const start = async (...args: Parameters<typeof serviceOn>) => {
  const s = await serviceOn(...args);
  services.push(s);
  return s;
};

/** A mono 16-bit PCM WAV of a sine tone: a frequency of its own per run, so the server cannot serve it from its cache. */
function toneWav(hz: number, rate = 8000, samples = 4000): Uint8Array {
  const view = new DataView(new ArrayBuffer(44 + samples * 2));
  let at = 0;
  const text = (s: string) => {
    for (const ch of s) view.setUint8(at++, ch.charCodeAt(0));
  };
  const u32 = (v: number) => {
    view.setUint32(at, v, true);
    at += 4;
  };
  const u16 = (v: number) => {
    view.setUint16(at, v, true);
    at += 2;
  };
  text('RIFF');
  u32(36 + samples * 2);
  text('WAVEfmt ');
  u32(16); // the fmt chunk's size
  u16(1); // PCM
  u16(1); // one channel
  u32(rate);
  u32(rate * 2); // bytes per second
  u16(2); // bytes per frame
  u16(16); // bits per sample
  text('data');
  u32(samples * 2);
  for (let i = 0; i < samples; i++) u16(Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate)) & 0xffff);
  return new Uint8Array(view.buffer);
}

const ascii = (b: Uint8Array, from: number, to: number) => new TextDecoder().decode(b.subarray(from, to));
const SIGNATURES: Record<string, (b: Uint8Array) => boolean> = {
  'video/mp4': (b) => ascii(b, 4, 8) === 'ftyp',
  'video/webm': (b) => b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3,
  'audio/flac': (b) => ascii(b, 0, 4) === 'fLaC',
  'audio/mpeg': (b) => ascii(b, 0, 3) === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0),
  'audio/opus': (b) => ascii(b, 0, 4) === 'OggS' && ascii(b, 0, 64).includes('OpusHead'),
};

describe('inputs and outputs of v2 jobs on the real engine server', () => {
  it(
    'an uploaded PNG through LoadImage -> ImageInvert -> ImageScale -> SaveImage: the output holds its pixels inverted and scaled',
    async () => {
      const h = await start([a]);
      const [w, ht] = [5, 3];
      const pixels = crypto.getRandomValues(new Uint8Array(w * ht * 3));
      const png = encodePng({ width: w, height: ht, channels: 3, data: pixels });
      const asset = await upload(h, png, { content_type: 'image/png', file_path: 'known.png' });
      expect(asset.res.status).toBe(201);

      const job = await submitOk(h, {
        load: { class_type: 'LoadImage', inputs: { image: assetRef(asset.body.id) } },
        inv: { class_type: 'ImageInvert', inputs: { image: ['load', 0] } },
        scale: {
          class_type: 'ImageScale',
          inputs: { image: ['inv', 0], upscale_method: 'nearest-exact', width: w * 2, height: ht * 2, crop: 'disabled' },
        },
        save: { class_type: 'SaveImage', inputs: { images: ['scale', 0], filename_prefix: 'staged' } },
      });
      const done = await ended(h, job.id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.outputs.map((o: any) => [o.node_id, o.type, o.content_type])).toEqual([['save', 'image', 'image/png']]);

      const { bytes, contentType } = await download(h, done.outputs[0]);
      expect(contentType).toBe('image/png');
      // Each input pixel became a 2x2 block of its inverse (within 1: the server truncates floats to bytes).
      const got = pixelsOf(bytes, w * 2, ht * 2);
      const off = got.filter((px, p) => {
        const [row, col] = [Math.floor(p / (w * 2)), p % (w * 2)];
        const source = (Math.floor(row / 2) * w + Math.floor(col / 2)) * 3;
        return px.some((v, c) => Math.abs(v - (255 - pixels[source + c])) > 1);
      });
      expect(off).toEqual([]);
    },
    TEST_MS,
  );

  it(
    'video (CreateVideo -> SaveVideo, SaveWEBM) and audio (an uploaded WAV -> SaveAudio, MP3, Opus): each output is the file the server wrote, typed',
    async () => {
      const h = await start([a]);
      const wav = toneWav(200 + (uniqueColor() % 1000));
      const asset = await upload(h, wav, { content_type: 'audio/wav', file_path: 'tone.wav' });
      expect(asset.res.status).toBe(201);

      const job = await submitOk(h, {
        frames: { class_type: 'EmptyImage', inputs: { width: 32, height: 24, batch_size: 6, color: uniqueColor() } },
        video: { class_type: 'CreateVideo', inputs: { images: ['frames', 0], fps: 6 } },
        mp4: { class_type: 'SaveVideo', inputs: { video: ['video', 0], filename_prefix: 'clip', format: 'auto', codec: 'auto' } },
        webm: { class_type: 'SaveWEBM', inputs: { images: ['frames', 0], filename_prefix: 'clip', codec: 'vp9', fps: 6, crf: 32 } },
        sound: { class_type: 'LoadAudio', inputs: { audio: assetRef(asset.body.id) } },
        flac: { class_type: 'SaveAudio', inputs: { audio: ['sound', 0], filename_prefix: 'audio/tone' } },
        mp3: { class_type: 'SaveAudioMP3', inputs: { audio: ['sound', 0], filename_prefix: 'audio/tone', quality: 'V0' } },
        opus: { class_type: 'SaveAudioOpus', inputs: { audio: ['sound', 0], filename_prefix: 'audio/tone', quality: '64k' } },
      });
      const done = await ended(h, job.id);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const rows = done.outputs.map((o: any) => [o.node_id, o.type, o.content_type]).sort((x: string[], y: string[]) => x[0].localeCompare(y[0]));
      expect(rows).toEqual([
        ['flac', 'audio', 'audio/flac'],
        ['mp3', 'audio', 'audio/mpeg'],
        ['mp4', 'video', 'video/mp4'],
        ['opus', 'audio', 'audio/opus'],
        ['webm', 'video', 'video/webm'],
      ]);

      // What the server wrote, as its own history names it (SaveVideo and SaveWEBM list theirs as animated images).
      const entry = (await historyOf(a, job.id))!;
      for (const output of done.outputs) {
        const ui = entry.outputs[output.node_id];
        const [file] = (ui.images ?? ui.audio) as Array<{ filename: string; subfolder: string }>;
        const written = new Uint8Array(await readFile(join(a.base, 'output', file.subfolder, file.filename)));
        const { bytes, contentType } = await download(h, output);
        expect(Buffer.from(bytes).equals(written), output.node_id).toBe(true);
        expect(contentType).toBe(output.content_type);
        expect(SIGNATURES[output.content_type](bytes), output.node_id).toBe(true);
      }
    },
    TEST_MS,
  );
});

describe('cancel on the real engine server', () => {
  const serverIdle = (server: RealComfyUI) =>
    eventually('the server has nothing left to run', async () => {
      const q = await queueOf(server);
      return q.running.length + q.pending.length === 0;
    });

  it.each([
    // The account's tier lets one job run at a time: the second stays queued in graphrun.
    ['queued in graphrun', { tierLimits: { default: 1, free: 1 } }, 'queued'],
    // The tier lets both run, the pool has one slot: the second waits in the engine for the server.
    ['waiting for the busy server', {}, 'running'],
  ] as const)(
    'a job %s ends canceled and never reaches the server; the job ahead of it succeeds',
    async (_, options, before) => {
      const h = await start([a], {}, options);
      const first = await submitOk(h, blurChain(uniqueColor(), 1));
      const waiting = await submitOk(h, invertChain(uniqueColor()));
      await nodeRuns(h, first.id, 'b1');
      expect((await jobNow(h, waiting.id)).status).toBe(before);

      const { res, body } = await cancelJob(h, waiting.id);
      expect(res.status).toBeLessThan(300);
      expect(['canceling', 'canceled']).toContain(body.status);
      expect((await ended(h, waiting.id)).status).toBe('canceled');
      expect((await ended(h, first.id)).status).toBe('succeeded');
      await serverIdle(a);
      expect(await historyOf(a, waiting.id)).toBeNull();
      expect((await jobNow(h, waiting.id)).outputs).toEqual([]);
    },
    TEST_MS,
  );

  it(
    "a job pending in the server's own queue ends canceled, is deleted there and never runs; the job ahead of it succeeds",
    async () => {
      // Two at once on the server: the second waits in its queue while the first computes.
      const h = await start([a], { perWorker: 2 });
      const first = await submitOk(h, blurChain(uniqueColor(), 1));
      await nodeRuns(h, first.id, 'b1');
      const pending = await submitOk(h, invertChain(uniqueColor()));
      await eventually('the second job pending on the server', async () => (await queueOf(a)).pending.includes(pending.id));

      await cancelJob(h, pending.id);
      expect((await ended(h, pending.id)).status).toBe('canceled');
      const done = await ended(h, first.id);
      expect(done.status).toBe('succeeded');
      expect(done.outputs).toHaveLength(1);
      // Had it stayed in the server's queue, the server would have run it once the first was done.
      await serverIdle(a);
      expect(await historyOf(a, pending.id)).toBeNull();
    },
    TEST_MS,
  );

  it(
    'a running job ends canceled and the server interrupts it before its next node; the next job runs on that server',
    async () => {
      const h = await start([a]);
      const job = await submitOk(h, blurChain(uniqueColor(), 3, 'canceled'));
      await nodeRuns(h, job.id, 'b1');
      await cancelJob(h, job.id);
      const canceled = await ended(h, job.id);
      expect(canceled.status).toBe('canceled');
      expect(canceled.outputs).toEqual([]);

      // The server stops once the node under way is done: its history says interrupted, SaveImage never ran.
      await eventually('the server records the prompt', async () => (await historyOf(a, job.id)) !== null);
      const entry = (await historyOf(a, job.id))!;
      expect(entry.status.status_str).toBe('error');
      const interrupted = messageOf(entry, 'execution_interrupted');
      expect(interrupted).toBeDefined();
      expect(interrupted!.executed).not.toContain('s');
      expect(entry.outputs).toEqual({});
      expect(messageOf(entry, 'execution_success')).toBeUndefined();

      const color = uniqueColor();
      const next = await ended(h, (await submitOk(h, invertChain(color))).id);
      expect(next.status, JSON.stringify(next.error)).toBe('succeeded');
      expect((await historyOf(a, next.id))?.status.status_str).toBe('success');
      const inverted = rgbOf(color).map((v) => 255 - v);
      expect(pixelsOff((await download(h, next.outputs[0])).bytes, inverted)).toBe(0);
    },
    TEST_MS,
  );
});

describe('two jobs at once on real engine servers', () => {
  /** Two jobs of one blur each, submitted back to back, each of a colour of its own. */
  async function submitTwo(h: RealService) {
    const colors = [uniqueColor(), uniqueColor()];
    const ids: string[] = [];
    for (const color of colors) ids.push((await submitOk(h, blurChain(color, 1, 'pair'))).id);
    return { ids, colors };
  }
  /** Both succeed, each with its own image: its own colour (blurring a plain image keeps it plain). */
  async function expectOwnOutputs(h: RealService, ids: string[], colors: number[]) {
    const jobs = await Promise.all(ids.map((id) => ended(h, id)));
    for (const [i, job] of jobs.entries()) {
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      expect(job.outputs.map((o: any) => o.node_id)).toEqual(['s']);
      expect(pixelsOff((await download(h, job.outputs[0])).bytes, rgbOf(colors[i]))).toBe(0);
    }
  }

  it(
    'with two servers in the pool they run in parallel, one on each',
    async () => {
      const h = await start([a, b]);
      const { ids, colors } = await submitTwo(h);
      await expectOwnOutputs(h, ids, colors);
      const onA = await Promise.all(ids.map((id) => historyOf(a, id)));
      const onB = await Promise.all(ids.map((id) => historyOf(b, id)));
      // Each ran on exactly one server, and not on the same one.
      expect(onA.map((e) => e !== null)).toEqual(onB.map((e) => e === null));
      expect(onA.filter((e) => e !== null)).toHaveLength(1);
      // By the servers' own clocks (one machine), each started before the other finished.
      const [x, y] = ids.map((_, i) => {
        const entry = (onA[i] ?? onB[i]) as HistoryEntry;
        return [messageOf(entry, 'execution_start')!.timestamp, messageOf(entry, 'execution_success')!.timestamp];
      });
      expect(x[0] < y[1] && y[0] < x[1], `runs ${x} and ${y} overlap`).toBe(true);
    },
    TEST_MS,
  );

  it(
    'with one server the second waits in graphrun until the first is done, then runs there',
    async () => {
      const h = await start([a]);
      const { ids, colors } = await submitTwo(h);
      // What the server holds of the two, snapshot by snapshot, until it has run both.
      const held: string[][] = [];
      await eventually('the server ran both jobs', async () => {
        const q = await queueOf(a);
        held.push([...q.running, ...q.pending].filter((id) => ids.includes(id)));
        return (await Promise.all(ids.map((id) => historyOf(a, id)))).every((e) => e?.status.status_str === 'success');
      });
      // Never both at once: the second reached the server only after the first had left it.
      expect(held.some((both) => both.length === 1)).toBe(true);
      expect(held.filter((both) => both.length > 1)).toEqual([]);
      await expectOwnOutputs(h, ids, colors);
    },
    TEST_MS,
  );
});
