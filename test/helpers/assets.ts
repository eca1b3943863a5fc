// Shared helpers of the v2 assets HTTP tests: a movable clock, envelope and
// Asset assertions, hand-built multipart bodies and test payloads.
import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { blake3 } from 'hash-wasm';
import { expect } from 'vitest';
import { type Harness, uploadForm } from './harness.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The fields of the contract's Asset on a GET; create responses add `created_new`. */
export const ASSET_FIELDS = ['content_type', 'created_at', 'expires_at', 'file_path', 'hash', 'id', 'size_bytes', 'url', 'url_expires_at'];

export interface Clock {
  now: () => number;
  advance(ms: number): void;
  readonly t: number;
}

/** A clock that stands still until the test moves it. Starts on a whole second. */
export function testClock(start = Date.parse('2030-01-01T00:00:00.000Z')): Clock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
    get t() {
      return t;
    },
  };
}

export const iso = (ms: number) => new Date(ms).toISOString();
export const enc = (s: string) => new TextEncoder().encode(s);

export function randomBytes(n: number): Uint8Array {
  const b = nodeRandomBytes(n);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export async function blake3Of(bytes: Uint8Array): Promise<string> {
  return `blake3:${await blake3(bytes)}`;
}

export function concatBytes(...parts: Array<Uint8Array | string>): Uint8Array {
  const arrays = parts.map((p) => (typeof p === 'string' ? enc(p) : p));
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

/**
 * Binary content that is hostile to a multipart parser: CR, LF, CRLF runs,
 * "--", "\r\n--" followed by what looks like the start of a boundary (undici's
 * FormData boundaries begin with "----formdata-undici-0"), NULs and high bytes.
 */
export function trickyPayload(): Uint8Array {
  return concatBytes(
    '\r\n--',
    '\r\n',
    new Uint8Array([0, 255, 13, 10, 13, 10, 0, 45, 45]),
    '\r\n--XYZ-boundar',
    '\r\n------formdata-undici-0',
    '\r\n\r\n--\r\n',
    '--XYZ-boundary-', // after the CRLF above: a delimiter of boundary "XYZ-boundary-" minus its last characters
    '\r',
    new Uint8Array(256).map((_, i) => i),
    '\r\n-',
  );
}

/** Asserts the reference engine server's answer to a path no route takes (outside /api/v2 and /proxy): 404 and aiohttp's text. */
export async function expectReferenceNotFound(res: Response): Promise<void> {
  const text = await res.text();
  expect({ status: res.status, type: res.headers.get('content-type'), body: text }).toEqual({
    status: 404,
    type: 'text/plain; charset=utf-8',
    body: '404: Not Found',
  });
}

/** Asserts the v2 error envelope with this status and code; returns the body. */
export async function expectEnvelope(res: Response, status: number, code: string) {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status });
  const body = JSON.parse(text);
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(body.error)) expect(['code', 'message', 'details']).toContain(key);
  if (body.error.details !== undefined && body.error.details !== null) {
    expect(typeof body.error.details).toBe('object');
    expect(Array.isArray(body.error.details)).toBe(false);
  }
  return body as { error: { code: string; message: string; details?: Record<string, any> | null } };
}

/** Asserts the values of an Asset (without pinning the key set) against the bytes it holds. */
export async function expectAssetOf(asset: any, bytes: Uint8Array, expected: { content_type?: string; file_path?: string | null } = {}) {
  expect(asset.id).toMatch(UUID);
  expect(asset.hash).toBe(await blake3Of(bytes));
  expect(asset.hash).toMatch(/^blake3:[0-9a-f]{64}$/);
  expect(asset.size_bytes).toBe(bytes.length);
  if (expected.content_type !== undefined) expect(asset.content_type).toBe(expected.content_type);
  if (expected.file_path !== undefined) expect(asset.file_path).toBe(expected.file_path);
  expect(asset.created_at).toMatch(ISO);
  expect(asset.url_expires_at).toMatch(ISO);
  expect(() => new URL(asset.url)).not.toThrow();
  expect(new URL(asset.url).pathname).toBe(`/api/v2/assets/${asset.id}/content`);
  expect('job_id' in asset).toBe(false);
}

export interface UploadResult {
  res: Response;
  body: any;
}

/** POST /api/v2/assets with a FormData body (fields first, then the file). */
export async function upload(
  h: Harness,
  bytes: Uint8Array | string,
  fields: Record<string, string | string[]> = {},
  headers: Record<string, string> = {},
): Promise<UploadResult> {
  const res = await h.fetch('/api/v2/assets', { method: 'POST', body: uploadForm(bytes, fields), headers });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { res, body };
}

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Uint8Array | string;
}

/** A hand-built multipart/form-data body, parts in the order given. */
/** The Content-Type of a multipart/form-data body with this boundary. */
export const MP = (boundary: string) => `multipart/form-data; boundary=${boundary}`;

export function multipartBody(boundary: string, parts: Part[], opts: { close?: boolean } = {}): Uint8Array {
  const chunks: Array<Uint8Array | string> = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(`${head}\r\n`, p.data, '\r\n');
  }
  if (opts.close !== false) chunks.push(`--${boundary}--\r\n`);
  return concatBytes(...chunks);
}

/** The standard fields around a file part, for hand-built bodies. */
export function fileParts(bytes: Uint8Array | string, fields: Record<string, string> = {}): Part[] {
  const merged = { content_type: 'application/octet-stream', file_path: 'file.bin', ...fields };
  return [
    ...Object.entries(merged).map(([name, data]) => ({ name, data })),
    { name: 'file', filename: 'file.bin', contentType: 'application/octet-stream', data: bytes },
  ];
}

export async function postRaw(
  h: Harness,
  body: Uint8Array | ReadableStream<Uint8Array> | string,
  contentType: string | null,
  headers: Record<string, string> = {},
) {
  const all: Record<string, string> = { ...headers };
  if (contentType !== null) all['content-type'] = contentType;
  return h.fetch('/api/v2/assets', { method: 'POST', body, headers: all });
}

export async function fromHash(h: Harness, body: unknown, headers: Record<string, string> = {}) {
  return h.fetch('/api/v2/assets/from-hash', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export async function headByHash(h: Harness, hash: string, headers: Record<string, string> = {}) {
  const res = await h.fetch(`/api/v2/assets/by-hash/${hash}`, { method: 'HEAD', headers });
  expect(await res.text()).toBe('');
  return res.status;
}

export async function bytesOf(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

/** Polls until `check` returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Rejects when `promise` does not settle within `ms`: a blocked response fails fast, not by test timeout. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
    }),
  ]);
}

/** A random UUID v4 that no asset has. */
export const unknownId = () => crypto.randomUUID();

/** Byte equality that stays fast for megabytes (toEqual walks typed arrays element by element). */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.length).toBe(expected.length);
  let first = -1;
  if (Buffer.compare(actual, expected) !== 0) {
    first = actual.findIndex((b, i) => b !== expected[i]);
  }
  expect(first, 'index of the first differing byte').toBe(-1);
}

/** A response's JSON body, untyped (the tests assert its shape). */
export async function json(res: Response): Promise<any> {
  return res.json();
}
