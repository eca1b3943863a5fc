// A fake music vendor: a real HTTP server speaking the music contract
// (POST /t2m/generate, multipart prompt and duration, Bearer token, NDJSON
// back), whose audio comes from the local synthesizer. Each request takes
// the next scripted behaviour: success, an error status, a malformed line,
// an in-stream error, a dropped connection, a slow stream, or no answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { createLocalMusicProvider } from '../../providers/local/music/provider.ts';

export type VendorBehaviour =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'malformed'; after: number }
  | { kind: 'error-event'; after: number }
  | { kind: 'drop'; after: number }
  | { kind: 'slow'; delayMs: number }
  /** Headers sent, then not a byte until the client hangs up. */
  | { kind: 'silent' }
  | { kind: 'extra-types' }
  | { kind: 'not-ndjson' }
  | { kind: 'hang' };

export interface VendorRequest {
  authorization: string | undefined;
  prompt: string | null;
  duration: string | null;
  /** Which connection (1-based) carried it. */
  connection: number;
  /** Lines written, with when (ms since the request came in). */
  lines: Array<{ at: number; type: string }>;
  /** The client closed the connection before the stream ended. */
  closedEarly: boolean;
  ended: boolean;
}

/** Words of a vendor failure that must never reach the service's clients. */
export const VENDOR_SECRET = 'vendor-internal-detail-7f3a';

export interface FakeMusicVendor {
  url: string;
  token: string;
  requests: VendorRequest[];
  connections: number;
  /** Behaviours for the next requests, in order; then 'ok'. */
  script(...behaviours: VendorBehaviour[]): void;
  close(): Promise<void>;
}

const provider = createLocalMusicProvider({ chunkSeconds: 0.25 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeMusicVendor(token = 'vendor-token'): Promise<FakeMusicVendor> {
  const queue: VendorBehaviour[] = [];
  const requests: VendorRequest[] = [];
  const sockets = new Map<Socket, number>();
  let connections = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    const web = new Request(`http://vendor${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body: req.method === 'POST' ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
      duplex: 'half',
    } as RequestInit);
    const form = await web.formData().catch(() => null);
    const record: VendorRequest = {
      authorization: req.headers.authorization,
      prompt: (form?.get('prompt') as string | null) ?? null,
      duration: (form?.get('duration') as string | null) ?? null,
      connection: sockets.get(req.socket) ?? 0,
      lines: [],
      closedEarly: false,
      ended: false,
    };
    requests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) record.closedEarly = true;
    });
    const behaviour = queue.shift() ?? { kind: 'ok' };
    if (behaviour.kind === 'hang') return;
    if (req.method !== 'POST' || new URL(web.url).pathname !== '/t2m/generate') {
      res.writeHead(404).end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${token}`) return fail(res, 401);
    if (behaviour.kind === 'status') return fail(res, behaviour.status, behaviour.retryAfter);
    if (!form || !record.prompt) return fail(res, 422);
    if (behaviour.kind === 'not-ndjson') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html>${VENDOR_SECRET}</html>`);
      return;
    }

    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    if (behaviour.kind === 'silent') {
      res.flushHeaders();
      await new Promise<void>((resolve) => res.once('close', () => resolve()));
      return;
    }
    const write = (event: { type: string }) => {
      record.lines.push({ at: Date.now() - started, type: event.type });
      return new Promise<void>((resolve) => (res.write(`${JSON.stringify(event)}\n`) ? resolve() : res.once('drain', resolve)));
    };
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let n = 0;
    try {
      for await (const event of provider.generate({ prompt: record.prompt, duration: Number(record.duration ?? 30) }, abort.signal)) {
        if (res.destroyed) return;
        if ('after' in behaviour && n === behaviour.after) {
          if (behaviour.kind === 'malformed') {
            record.lines.push({ at: Date.now() - started, type: '(malformed)' });
            res.end('{"type": "audio_chunk", "data": \n');
          } else if (behaviour.kind === 'error-event') {
            await write({ type: 'error', code: 'vendor_gpu_fault', message: VENDOR_SECRET } as { type: string });
            res.end();
          } else {
            res.socket?.destroy();
          }
          return;
        }
        if (behaviour.kind === 'slow') await sleep(behaviour.delayMs);
        if (behaviour.kind === 'extra-types' && n > 0) await write({ type: 'vendor_progress', percent: n } as { type: string });
        await write(event);
        n++;
      }
      record.ended = true;
      res.end();
    } catch {
      res.destroy();
    }
  }

  function fail(res: ServerResponse, status: number, retryAfter?: string): void {
    res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
    res.end(JSON.stringify({ detail: { code: `vendor_${status}`, message: `${VENDOR_SECRET} (${status})` } }));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => sockets.set(socket, ++connections));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    get connections() {
      return connections;
    },
    script: (...behaviours) => void queue.push(...behaviours),
    async close() {
      for (const socket of sockets.keys()) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
