// Shared helpers of the cloud file-route tests (test/cloud-files-*): a jobs
// harness with two accounts, requests as an account's X-API-Key, PNGs made
// with the local engine's encoder, the multipart forms of /upload/image and
// /upload/mask, and the cloud error-shape assertion.
import { expect } from 'vitest';
import type { ServiceOptions } from '../../index.ts';
import { encodePng } from '../../lib/png/index.ts';
import { blake3Of } from './assets.ts';
import type { Harness, Mode } from './harness.ts';
import { type JobsHarness, startJobs, withHeaders } from './jobs.ts';

export const FILE_ACCOUNTS = [
  { id: 'alice', tier: 'free', apiKeys: ['key-alice'] },
  { id: 'bob', tier: 'free', apiKeys: ['key-bob'] },
];

export interface FilesHarness {
  h: JobsHarness;
  alice: JobsHarness;
  bob: JobsHarness;
}

/** A jobs harness with alice and bob (keys key-alice, key-bob), and each account's view of it. */
export async function startFiles(mode: Mode, options: Partial<ServiceOptions> = {}): Promise<FilesHarness> {
  const h = await startJobs(mode, { accounts: FILE_ACCOUNTS, ...options });
  return { h, alice: asApiKey(h, 'key-alice'), bob: asApiKey(h, 'key-bob') };
}

export const asApiKey = <H extends Harness>(h: H, key: string): H => withHeaders(h, { 'x-api-key': key });

export interface Reply {
  res: Response;
  body: any;
}

export async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { res, body };
}

/** An 8-bit PNG whose pixel (x, y) is `pixel(x, y)` (3 or 4 samples 0..255). */
export function makePng(
  width: number,
  height: number,
  channels: 3 | 4,
  pixel: (x: number, y: number) => number[],
  text?: Record<string, string>,
): Uint8Array {
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set(pixel(x, y).slice(0, channels), (y * width + x) * channels);
  }
  return encodePng({ width, height, channels, data }, { text });
}

/** The content-addressed name the service gives these bytes. */
export async function nameOf(bytes: Uint8Array, ext = '.png'): Promise<string> {
  return (await blake3Of(bytes)).slice('blake3:'.length) + ext;
}

export interface FilePart {
  bytes: Uint8Array | string;
  filename?: string;
  contentType?: string;
}

/** A multipart form: text fields first, then the file part `image` (unless null). */
export function uploadForm(file: FilePart | null, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) {
    const data = typeof file.bytes === 'string' ? new TextEncoder().encode(file.bytes) : file.bytes;
    form.append('image', new Blob([data], { type: file.contentType ?? 'image/png' }), file.filename ?? 'image.png');
  }
  return form;
}

export async function postForm(h: Harness, path: string, form: FormData, headers: Record<string, string> = {}): Promise<Reply> {
  return reply(await h.fetch(path, { method: 'POST', body: form, headers }));
}

/** POST /api/upload/image; expects 200 and returns the body. */
export async function uploadImageOk(h: Harness, file: FilePart, fields: Record<string, string> = {}): Promise<any> {
  const r = await postForm(h, '/api/upload/image', uploadForm(file, fields));
  expect({ status: r.res.status, body: r.body }).toMatchObject({ status: 200 });
  expect(Object.keys(r.body).sort()).toEqual(['name', 'subfolder', 'type']);
  return r.body;
}

/** GET /view without following the redirect. */
export async function view(h: Harness, query: string, path = '/api/view'): Promise<Reply> {
  return reply(await h.fetch(`${path}?${query}`, { redirect: 'manual' }));
}

/** Follows a /view redirect with a bare fetch: no auth header at all. */
export async function follow(h: Harness, r: Reply): Promise<Response> {
  expect(r.res.status).toBe(302);
  const location = r.res.headers.get('location');
  expect(location).toMatch(/^https?:\/\//);
  return h.fetch(location!);
}

/** Asserts the cloud error body `{code, message}` and the status. */
export function expectCloudError(r: Reply, status: number, code: string): void {
  expect({ status: r.res.status, body: r.body }).toMatchObject({ status, body: { code, message: expect.any(String) } });
  expect(r.res.headers.get('content-type')).toMatch(/^application\/json/);
}
