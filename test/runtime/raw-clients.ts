// Raw clients of the runtime conformance suite (test/suites/runtime-conformance.ts):
// requests a fetch client cannot make (cut off, oversized, broken handshakes),
// a streamed multipart body hashed as it is produced, polling a job or a
// video task, retrying a generation while its account is busy, and uploads
// from a client process of their own.
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createBLAKE3 } from 'hash-wasm';
import { expect } from 'vitest';
import { randomBytes } from '../helpers/assets.ts';
import { sleep, TERMINAL } from '../helpers/jobs.ts';
import type { UploadBatch, UploadOutcome } from './upload-clients.ts';

const MiB = 1024 * 1024;
const UPLOAD_CLIENTS = new URL('./upload-clients.ts', import.meta.url).pathname;

export async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (status ${res.status}): ${text.slice(0, 200)}`);
  }
}

export async function hashStream(body: ReadableStream<Uint8Array>): Promise<{ hash: string; size: number }> {
  const hasher = await createBLAKE3();
  hasher.init();
  let size = 0;
  const reader = body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    hasher.update(r.value);
    size += r.value.byteLength;
  }
  return { hash: `blake3:${hasher.digest('hex')}`, size };
}

/** GETs `url` (a short pause between tries, `tries` at most) until `done` says its JSON is final; that JSON. */
export async function pollJson(url: string, done: (body: any) => boolean, headers: Record<string, string> = {}, tries = 1_000): Promise<any> {
  for (let i = 0; ; i++) {
    const res = await fetch(url, { headers });
    expect(res.status).toBe(200);
    const body = await json(res);
    if (done(body)) return body;
    if (i + 1 >= tries) throw new Error(`${url} still not final after ${tries} tries: ${JSON.stringify(body).slice(0, 200)}`);
    await sleep(20);
  }
}

export function pollJob(base: string, id: string, headers: Record<string, string> = {}): Promise<any> {
  return pollJson(`${base}/api/v2/jobs/${id}`, (job) => TERMINAL.includes(job.status), headers);
}

/**
 * Sends a request again while it is answered 429: a generation a client just
 * left may hold its account's slot until the server has seen the socket close.
 */
export async function whileBusy(send: () => Promise<Response>, tries = 100): Promise<Response> {
  for (let i = 1; ; i++) {
    const res = await send();
    if (res.status !== 429 || i >= tries) return res;
    await res.arrayBuffer();
    await sleep(50);
  }
}

/**
 * A POST that sends the head and part of a declared body, then drops the
 * connection: resolves once the socket is gone.
 */
export function abortedUpload(url: string, declared: number, sent: number): Promise<void> {
  return new Promise((resolve) => {
    const boundary = 'runtime-conformance-abort';
    const req = httpRequest(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(declared) },
    });
    req.on('error', () => {});
    req.on('close', () => resolve());
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    req.write(new Uint8Array(sent).fill(0x5a), () => setTimeout(() => req.destroy(), 50));
  });
}

/** A POST declaring `declared` bytes that sends only its first part and waits for the answer. */
export function oversizedUpload(url: string, declared: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'multipart/form-data; boundary=runtime-conformance-big', 'content-length': String(declared) },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (s: string) => (body += s))
        .on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy();
        });
    });
    req.write(new Uint8Array(64 * 1024));
  });
}

/** An upgrade request without the handshake's key and version: the status the server answers with. */
export function brokenHandshake(url: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { connection: 'Upgrade', upgrade: 'websocket' } });
    req.on('error', reject);
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error('the server switched protocols without a key'));
    });
    req.on('response', (res) => {
      res.resume().on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.end();
  });
}

/** A multipart body of `chunks` MiB of file bytes, produced as the request reads it; its blake3 once read. */
export function streamingUpload(chunks: number): { body: ReadableStream<Uint8Array>; contentType: string; digest: Promise<string> } {
  const boundary = `runtime-conformance-${crypto.randomUUID()}`;
  const enc = new TextEncoder();
  let done!: (hash: string) => void;
  const digest = new Promise<string>((resolve) => (done = resolve));
  let i = -1;
  let hasher: Awaited<ReturnType<typeof createBLAKE3>>;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i === -1) {
        hasher = await createBLAKE3();
        hasher.init();
        controller.enqueue(
          enc.encode(
            `--${boundary}\r\nContent-Disposition: form-data; name="content_type"\r\n\r\napplication/octet-stream\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="file_path"\r\n\r\nbig.bin\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
        );
      } else if (i < chunks) {
        const chunk = randomBytes(MiB);
        hasher.update(chunk);
        controller.enqueue(chunk);
      } else {
        controller.enqueue(enc.encode(`\r\n--${boundary}--\r\n`));
        done(`blake3:${hasher.digest('hex')}`);
        controller.close();
      }
      i++;
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, digest };
}

/**
 * Runs the upload batches in a Node process of its own (upload-clients.ts),
 * batch after batch: the outcomes of each, in order.
 */
export function uploadsFromAnotherProcess(batches: UploadBatch[]): Promise<UploadOutcome[][]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', UPLOAD_CLIENTS, JSON.stringify(batches)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(stdout));
      else reject(new Error(`the upload clients exited ${code}: ${stderr}`));
    });
  });
}
