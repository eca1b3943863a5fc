// The engine's WebSocket to one worker (`/ws?clientId=`), kept open and
// reconnected with backoff for as long as the engine runs. It asks for
// previews with metadata (so they name their prompt), hands text and binary
// frames to the pool, and reports up/down so running jobs can cross-check
// their state when messages may have been missed. Pings catch a half-open
// connection the OS would otherwise keep for minutes.
import WebSocket from 'ws';
import { parseJson } from '../../lib/json.ts';

export interface WorkerSocketHandlers {
  onMessage(msg: { type: string; data: Record<string, unknown> }): void;
  onBinary(bytes: Uint8Array): void;
  /** Connected; `reconnected` after an earlier connection dropped. */
  onUp(reconnected: boolean): void;
  onDown(): void;
}

export interface WorkerSocket {
  connected(): boolean;
  /** Resolves when connected, or after timeoutMs either way (true when connected). */
  whenConnected(timeoutMs: number): Promise<boolean>;
  close(): void;
}

export interface WorkerSocketOptions {
  url: string;
  clientId: string;
  handlers: WorkerSocketHandlers;
  handshakeTimeoutMs?: number;
  pingIntervalMs?: number;
  backoffMaxMs?: number;
}

/**
 * Messages that no job reads, left unparsed: `progress_state` restates every
 * node of the prompt at each change (on a large graph, most of what the socket
 * carries), `status` the queue's length. Matched as the engine server writes
 * them (`type` first); one written otherwise is parsed, and mapped to nothing.
 */
const UNREAD = /^\{\s*"type"\s*:\s*"(?:progress_state|status)"/;

export function openWorkerSocket(opts: WorkerSocketOptions): WorkerSocket {
  const wsUrl = `${opts.url.replace(/^http/, 'ws')}/ws?clientId=${encodeURIComponent(opts.clientId)}`;
  let ws: WebSocket | null = null;
  let open = false;
  let closed = false;
  let everUp = false;
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let ping: ReturnType<typeof setInterval> | undefined;
  let waiters: Array<() => void> = [];

  function connect(): void {
    if (closed) return;
    const sock = new WebSocket(wsUrl, { handshakeTimeout: opts.handshakeTimeoutMs ?? 5000, perMessageDeflate: false });
    ws = sock;
    let alive = true;
    sock.on('open', () => {
      open = true;
      failures = 0;
      // Without this the worker sends type-1 previews, which do not say which prompt they belong to.
      sock.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
      ping = setInterval(() => {
        if (!alive) return sock.terminate();
        alive = false;
        sock.ping();
      }, opts.pingIntervalMs ?? 15_000);
      ping.unref?.();
      const reconnected = everUp;
      everUp = true;
      for (const w of waiters) w();
      waiters = [];
      opts.handlers.onUp(reconnected);
    });
    sock.on('pong', () => {
      alive = true;
    });
    sock.on('message', (data, isBinary) => {
      alive = true;
      if (isBinary) {
        const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        opts.handlers.onBinary(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
        return;
      }
      const text = data.toString();
      if (UNREAD.test(text)) return;
      let msg: unknown;
      try {
        msg = parseJson(text);
      } catch {
        return;
      }
      if (msg && typeof msg === 'object' && typeof (msg as { type?: unknown }).type === 'string') {
        const m = msg as { type: string; data?: unknown };
        opts.handlers.onMessage({ type: m.type, data: m.data && typeof m.data === 'object' ? (m.data as Record<string, unknown>) : {} });
      }
    });
    sock.on('error', () => {
      // 'close' follows and reconnects.
    });
    sock.on('close', () => {
      clearInterval(ping);
      const wasOpen = open;
      open = false;
      if (ws === sock) ws = null;
      if (wasOpen) opts.handlers.onDown();
      if (closed) return;
      failures++;
      const delay = wasOpen ? 50 : Math.min(100 * 2 ** Math.min(failures, 10), opts.backoffMaxMs ?? 10_000);
      retry = setTimeout(connect, delay);
      retry.unref?.();
    });
  }

  connect();
  return {
    connected: () => open,
    whenConnected(timeoutMs) {
      if (open) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          resolve(open);
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== done);
          resolve(open);
        }, timeoutMs);
        waiters.push(done);
      });
    },
    close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(ping);
      for (const w of waiters) w();
      waiters = [];
      ws?.terminate();
    },
  };
}
