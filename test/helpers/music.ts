// Shared helpers of the music endpoint tests: the form, a client that reads
// the NDJSON body line by line as it arrives (ignoring event types it does
// not know, as the contract asks), the WAV it assembles, and a provider
// wrapper that counts what the generator produced.

import { blake3 } from 'hash-wasm';
import { expect } from 'vitest';
import type { MusicProvider } from '../../providers/music.ts';
import type { Harness } from './harness.ts';

export const MUSIC_PATH = '/proxy/musicgen/t2m/generate';
export const TITLE_FIELDS = ['copy_index', 'display_tags', 'prompt_index', 'stream_index', 'summary', 'title', 'type'];

export function musicForm(fields: Record<string, string | string[]>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) form.append(name, v);
  return form;
}

export function generate(h: Harness, fields: Record<string, string | string[]>, init: RequestInit = {}): Promise<Response> {
  return h.fetch(MUSIC_PATH, { method: 'POST', body: musicForm(fields), ...init });
}

/**
 * The client goes away from a music stream: through a real server it drops
 * the connection (`abort` made the request's signal); in process it cancels
 * the body, after ending `events` when it was reading them.
 */
export async function walkAway(h: Harness, abort: AbortController, res: Response, events?: AsyncGenerator<unknown>): Promise<void> {
  if (h.mode === 'node-server') return abort.abort();
  await events?.return(undefined);
  await res.body!.cancel();
}

/** Parsed lines of an NDJSON body, each as soon as its newline arrives, with when it arrived. */
export async function* ndjsonEvents(res: Response): AsyncGenerator<{ event: any; at: number }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim() !== '') yield { event: JSON.parse(line), at: Date.now() };
      }
    }
    expect(pending, 'the body ends with a newline').toBe('');
  } finally {
    reader.releaseLock();
  }
}

export interface Music {
  title: any;
  chunks: any[];
  complete: any;
  error: any;
  /** Types the client does not know, skipped. */
  skipped: string[];
  /** Every line's type in order. */
  types: string[];
  wav: Uint8Array;
}

/** What a client makes of a music stream: the known events, and the chunks' bytes joined into the WAV. */
export async function readMusic(res: Response): Promise<Music> {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/x-ndjson');
  const out: Music = { title: undefined, chunks: [], complete: undefined, error: undefined, skipped: [], types: [], wav: new Uint8Array(0) };
  const parts: Uint8Array[] = [];
  for await (const { event } of ndjsonEvents(res)) {
    out.types.push(event.type);
    switch (event.type) {
      case 'title':
        out.title = event;
        break;
      case 'audio_chunk':
        out.chunks.push(event);
        parts.push(Buffer.from(event.data, 'base64'));
        break;
      case 'complete':
        out.complete = event;
        break;
      case 'error':
        out.error = event;
        break;
      default:
        out.skipped.push(event.type);
    }
  }
  out.wav = new Uint8Array(Buffer.concat(parts));
  return out;
}

export interface Wav {
  riffSize: number;
  format: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  dataSize: number;
  samples: Int16Array;
}

export function parseWav(bytes: Uint8Array): Wav {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  expect(ascii(0)).toBe('RIFF');
  expect(ascii(8)).toBe('WAVE');
  expect(ascii(12)).toBe('fmt ');
  expect(view.getUint32(16, true)).toBe(16);
  expect(ascii(36)).toBe('data');
  const dataSize = view.getUint32(40, true);
  return {
    riffSize: view.getUint32(4, true),
    format: view.getUint16(20, true),
    channels: view.getUint16(22, true),
    sampleRate: view.getUint32(24, true),
    byteRate: view.getUint32(28, true),
    blockAlign: view.getUint16(32, true),
    bitsPerSample: view.getUint16(34, true),
    dataSize,
    samples: new Int16Array(bytes.slice(44, 44 + dataSize).buffer),
  };
}

/** A valid 16-bit PCM WAV of exactly `seconds`, whose sizes agree with its length. */
export function expectWav(bytes: Uint8Array, seconds: number): Wav {
  const wav = parseWav(bytes);
  expect(wav.format).toBe(1);
  expect(wav.bitsPerSample).toBe(16);
  expect(wav.blockAlign).toBe(wav.channels * 2);
  expect(wav.byteRate).toBe(wav.sampleRate * wav.channels * 2);
  expect(wav.dataSize).toBe(Math.round(wav.sampleRate * seconds) * wav.channels * 2);
  expect(bytes.length).toBe(44 + wav.dataSize);
  expect(wav.riffSize).toBe(bytes.length - 8);
  return wav;
}

export async function blake3Hash(bytes: Uint8Array): Promise<string> {
  return `blake3:${await blake3(bytes)}`;
}

/** Root mean square of the samples, in [0, 1]. */
export function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += (s / 32768) ** 2;
  return Math.sqrt(sum / samples.length);
}

export interface Counted {
  provider: MusicProvider;
  /** Events the wrapped generator produced, per generation started. */
  runs: Array<{ produced: number; finished: boolean; aborted: boolean }>;
}

/** Wraps a provider to see how far each generation went and whether it was stopped. */
export function counting(inner: MusicProvider): Counted {
  const runs: Counted['runs'] = [];
  return {
    runs,
    provider: {
      name: `counting ${inner.name}`,
      async *generate(request, signal) {
        const run = { produced: 0, finished: false, aborted: false };
        runs.push(run);
        try {
          for await (const event of inner.generate(request, signal)) {
            run.produced++;
            yield event;
          }
        } finally {
          run.finished = true;
          run.aborted = signal.aborted;
        }
      },
    },
  };
}

export async function expectMusicError(res: Response, status: number, code: string): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body: any = await res.json();
  expect(Object.keys(body)).toEqual(['detail']);
  expect(Object.keys(body.detail).sort()).toEqual(['code', 'message']);
  expect(body.detail.code).toBe(code);
  expect(typeof body.detail.message).toBe('string');
  expect(body.detail.message.length).toBeGreaterThan(0);
  return body.detail.message;
}
