// The fake worker's WebSocket side, `/ws?clientId=` as the real server: a
// status message (with the sid) on connect, and the running node again to a
// client reconnecting mid-prompt; the feature_flags exchange on the first
// message; prompt messages to that prompt's client only, previews as type 4
// to clients that said supports_preview_metadata and type 1 to the others;
// status and progress text (binary type 3) to everyone. Every frame sent is
// recorded for tests.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { jsonFrame, previewImageFrame, previewWithMetadataFrame, textFrame } from '../../core/ws/frames.ts';
import type { WorkerMessage } from './comfyui-run.ts';

export interface FakeSocket {
  sid: string;
  ws: WebSocket;
  /** The flags the client announced in its first message (null: it sent none). */
  featureFlags: Record<string, unknown> | null;
}

export interface SentFrame {
  sid: string;
  /** A JSON message's type, or `binary:1|3|4`. */
  type: string;
  data?: Record<string, unknown>;
  bytes?: Uint8Array;
}

export const SERVER_FEATURES = { supports_preview_metadata: true, max_upload_size: 100 * 1024 * 1024 };

export interface WsHub {
  sockets: Map<string, FakeSocket>;
  sent: SentFrame[];
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  toClient(sid: string | null, msg: WorkerMessage): void;
  /** A message for every socket (the real server's sid None). */
  toAll(msg: WorkerMessage): void;
  broadcastStatus(): void;
  /** Drops every socket without a close frame (a network failure). */
  dropAll(): void;
  close(): void;
}

export function createWsHub(opts: {
  queueRemaining(): number;
  /** The running prompt's client and node, for a client that reconnects mid-prompt. */
  runningFor(sid: string): string | null;
  refuse(): boolean;
}): WsHub {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const sockets = new Map<string, FakeSocket>();
  const sent: SentFrame[] = [];
  const status = () => ({ status: { exec_info: { queue_remaining: opts.queueRemaining() } } });

  function sendJson(s: FakeSocket, type: string, data: Record<string, unknown>) {
    if (s.ws.readyState !== s.ws.OPEN) return;
    sent.push({ sid: s.sid, type, data });
    s.ws.send(jsonFrame(type, data));
  }
  function sendBinary(s: FakeSocket, frame: Uint8Array) {
    if (s.ws.readyState !== s.ws.OPEN) return;
    sent.push({ sid: s.sid, type: `binary:${new DataView(frame.buffer, frame.byteOffset).getUint32(0)}`, bytes: frame });
    s.ws.send(frame, { binary: true });
  }

  function deliver(s: FakeSocket, msg: WorkerMessage) {
    if (msg.kind === 'json') return sendJson(s, msg.type, msg.data);
    if (msg.kind === 'text') return sendBinary(s, textFrame(msg.node_id, msg.text));
    // Each preview is sent twice by the run, once for each kind of client.
    if ((msg.to === 'metadata') !== (s.featureFlags?.supports_preview_metadata === true)) return;
    const meta = { node_id: msg.node_id, prompt_id: msg.prompt_id, display_node_id: msg.node_id, parent_node_id: null, real_node_id: msg.node_id };
    sendBinary(s, msg.to === 'metadata' ? previewWithMetadataFrame(meta, msg.format, msg.bytes) : previewImageFrame(msg.format, msg.bytes));
  }

  function connected(ws: WebSocket, req: IncomingMessage) {
    const url = new URL(req.url ?? '/', 'http://x');
    const sid = url.searchParams.get('clientId') || randomUUID().replaceAll('-', '');
    // As the real server: a second socket with the same clientId takes the session over.
    const s: FakeSocket = { sid, ws, featureFlags: null };
    sockets.set(sid, s);
    let first = true;
    ws.on('message', (raw, isBinary) => {
      if (!first || isBinary) return;
      first = false;
      try {
        const msg = JSON.parse(String(raw));
        if (msg?.type === 'feature_flags') {
          s.featureFlags = typeof msg.data === 'object' && msg.data ? msg.data : {};
          sendJson(s, 'feature_flags', SERVER_FEATURES);
        }
      } catch {
        // Not JSON: the real server logs and ignores it.
      }
    });
    ws.on('close', () => {
      if (sockets.get(sid) === s) sockets.delete(sid);
    });
    ws.on('error', () => {});
    sendJson(s, 'status', { ...status(), sid });
    const node = opts.runningFor(sid);
    if (node) sendJson(s, 'executing', { node });
  }

  return {
    sockets,
    sent,
    upgrade(req, socket, head) {
      const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/api(?=\/)/, '');
      if (path !== '/ws' || opts.refuse()) {
        socket.end(`HTTP/1.1 ${path !== '/ws' ? '404 Not Found' : '503 Service Unavailable'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => connected(ws, req));
    },
    toClient(sid, msg) {
      const s = sid === null ? undefined : sockets.get(sid);
      if (s) deliver(s, msg);
    },
    toAll(msg) {
      for (const s of sockets.values()) deliver(s, msg);
    },
    broadcastStatus() {
      for (const s of sockets.values()) sendJson(s, 'status', status());
    },
    dropAll() {
      for (const s of sockets.values()) s.ws.terminate();
      sockets.clear();
    },
    close() {
      for (const s of sockets.values()) s.ws.terminate();
      sockets.clear();
      wss.close();
    },
  };
}
