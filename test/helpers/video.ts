// Shared helpers of the video endpoint tests: key frames, requests, polling
// a task to an end state, a real HTTP server that receives callbacks (and
// serves key frames), and reading the output video back.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { encodePng } from '../../lib/png/index.ts';
import { type Apng, readApng } from './apng-reader.ts';
import type { Harness } from './harness.ts';

export const MULTIFRAME = '/proxy/videogen/multiframe';
export const taskPath = (id: string) => `/proxy/videogen/tasks/${id}`;

export function solidPng(width: number, height: number, rgb: [number, number, number]): Uint8Array {
  return encodePng({ width, height, channels: 3, data: Uint8Array.from({ length: width * height * 3 }, (_, i) => rgb[i % 3]) });
}
export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
export const RED = b64(solidPng(4, 2, [255, 0, 0]));
export const BLUE = b64(solidPng(2, 4, [0, 0, 255]));
export const GREEN = b64(solidPng(3, 3, [0, 255, 0]));

/** A valid request: two frames, 540p, short. */
export function multiframe(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'gen-q2-turbo',
    resolution: '540p',
    image_settings: [
      { key_image: RED, duration: 1, prompt: 'red' },
      { key_image: BLUE, duration: 1.5, prompt: 'to blue' },
    ],
    ...extra,
  };
}

export function postTask(h: Harness, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return h.fetch(MULTIFRAME, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function createTask(h: Harness, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await postTask(h, body, headers);
  const json = (await res.json()) as any;
  expect({ status: res.status, body: json }).toMatchObject({ status: 200, body: { state: 'created' } });
  return json;
}

/** GETs the task until its state is one of `states`; every state seen, in order. */
export async function waitForTask(
  h: Harness,
  id: string,
  states: string[] = ['success', 'failed'],
  headers: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<{ task: any; seen: string[] }> {
  const seen: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await h.fetch(taskPath(id), { headers });
    expect(res.status).toBe(200);
    const task = (await res.json()) as any;
    if (seen.at(-1) !== task.state) seen.push(task.state);
    if (states.includes(task.state)) return { task, seen };
    if (Date.now() > deadline) throw new Error(`task ${id} still ${task.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The output video of a successful task, fetched from its signed URL without credentials, decoded. */
export async function fetchOutput(h: Harness, task: any): Promise<{ bytes: Uint8Array; apng: Apng; contentType: string | null }> {
  expect(task.output).toMatchObject({ content_type: 'image/apng', url: expect.any(String) });
  const res = await h.fetch(task.output.url);
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(bytes.length).toBe(task.output.size_bytes);
  return { bytes, apng: readApng(bytes), contentType: res.headers.get('content-type') };
}

export interface Received {
  path: string;
  body: any;
  at: number;
  headers: IncomingMessage['headers'];
}

export interface Receiver {
  url: string;
  /** Callback POSTs, in arrival order (also those answered with an error). */
  received: Received[];
  /** GETs of served files, by path. */
  gets: string[];
  /** Resolves once `n` POSTs arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1: POSTs are recorded and answered with
 * `status(n)` for the n-th one (default 200); GETs serve `files`.
 */
export async function startReceiver(
  options: { status?: (n: number, body: any) => number; files?: Record<string, Uint8Array> } = {},
): Promise<Receiver> {
  const received: Received[] = [];
  const gets: string[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET') {
      gets.push(req.url ?? '');
      const file = options.files?.[req.url ?? ''];
      if (!file) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': file.length }).end(file);
    }
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const body = JSON.parse(text);
      received.push({ path: req.url ?? '', body, at: Date.now(), headers: req.headers });
      res.writeHead(options.status?.(received.length, body) ?? 200).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    gets,
    async waitFor(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`only ${received.length} of ${n} callbacks arrived`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return received.slice(0, n);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
