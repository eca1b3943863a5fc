// A real `ws` client for the `/ws` tests: connects with query parameters
// (and headers on the upgrade),
// keeps every frame in arrival order (text parsed as JSON, binary as bytes),
// and waits for the frame a test expects; plus the refusal of an upgrade.
import { WebSocket } from 'ws';

export type Frame = { kind: 'text'; type: string; data: any } | { kind: 'binary'; bytes: Uint8Array; type: number };

export interface WsClient {
  ws: WebSocket;
  frames: Frame[];
  /** Text frames of a job (`data.prompt_id`), in order. */
  jobMessages(promptId: string): Array<{ type: string; data: any }>;
  binaries(): Array<{ type: number; bytes: Uint8Array }>;
  /** Resolves with the first frame (from `from` on) that matches; fails after `timeoutMs`. */
  waitFor(what: string, match: (f: Frame) => boolean, timeoutMs?: number, from?: number): Promise<Frame>;
  /** Resolves when the server closes (or the socket ends) with the close code. */
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  close(): Promise<void>;
}

export const wsUrl = (base: string, path: string, query: Record<string, string> = {}) => {
  const url = new URL(path, base.replace(/^http/, 'ws'));
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
};

export async function connectWs(
  base: string,
  query: Record<string, string> = {},
  path = '/ws',
  headers: Record<string, string> = {},
): Promise<WsClient> {
  const ws = new WebSocket(wsUrl(base, path, query), { headers });
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data, isBinary) => {
    const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (isBinary) {
      const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength).slice();
      frames.push({ kind: 'binary', bytes, type: new DataView(bytes.buffer).getUint32(0) });
    } else {
      const msg = JSON.parse(buf.toString('utf8'));
      frames.push({ kind: 'text', type: msg.type, data: msg.data });
    }
    for (const wake of [...waiters]) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of [...waiters]) wake();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });

  return {
    ws,
    frames,
    jobMessages: (promptId) => frames.flatMap((f) => (f.kind === 'text' && f.data?.prompt_id === promptId ? [{ type: f.type, data: f.data }] : [])),
    binaries: () => frames.flatMap((f) => (f.kind === 'binary' ? [{ type: f.type, bytes: f.bytes }] : [])),
    waitFor(what, match, timeoutMs = 5000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.slice(from).find(match);
          if (found) return done(() => resolve(found));
          if (ws.readyState === ws.CLOSED) return done(() => reject(new Error(`socket closed while waiting for ${what}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`timed out waiting for ${what}; got ${summary(frames)}`))), timeoutMs);
        const done = (fn: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          fn();
        };
        waiters.add(check);
        check();
      });
    },
    closed,
    send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
    async close() {
      if (ws.readyState === ws.CLOSED) return;
      ws.close();
      await closed;
    },
  };
}

function summary(frames: Frame[]): string {
  return JSON.stringify(frames.map((f) => (f.kind === 'text' ? f.type : `binary:${f.type}`)));
}

/** An upgrade the server refuses: its status and JSON body. */
export function refusedUpgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close();
      reject(new Error('upgrade was accepted'));
    });
    ws.once('error', () => {});
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (s: string) => (text += s))
        .on('end', () => {
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
    });
  });
}
