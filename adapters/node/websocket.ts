// WebSocket support for a Node http.Server: the service decides on each
// upgrade (refuse with a Response, or accept), and native `ws` events are
// bridged to its runtime-neutral open/message/close hooks.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { consoleLogger } from '../../core/log.ts';
import type { Logger, Service, WsPeer } from '../../core/types.ts';
import { guardHook } from '../../core/ws/guard-hook.ts';
import { errorFields, statusOf } from './errors.ts';
import { normalizeMountPrefix, underPrefix } from './mount-prefix.ts';
import { writeRawResponse } from './raw-response.ts';
import { requestHeaders, requestUrl } from './request-head.ts';

export interface WebSocketOptions {
  trustProxy?: boolean;
  /** Largest message a client may send, bytes. Default 1 MiB: clients send small JSON. */
  maxPayload?: number;
  logger?: Logger;
  /**
   * The path the service is mounted under ('/graph': the endpoint is then
   * /graph/ws). Upgrades outside it are left to the server's other 'upgrade'
   * listeners, or refused with 404 when there are none.
   */
  mountPrefix?: string;
}

export interface AttachedWebSocket {
  /** Says goodbye (1001) to every peer, and drops them after a short grace. */
  close(): Promise<void>;
}

class NodeWsPeer implements WsPeer {
  readonly id = randomUUID();
  private built: Request | undefined;
  constructor(
    private readonly start: { url: URL; headers: IncomingMessage['headers'] },
    readonly context: unknown,
    private readonly socket: WebSocket,
  ) {}
  /** Built on first use: a Request costs kilobytes, and a server may hold many idle peers. */
  get request(): Request {
    return (this.built ??= new Request(this.start.url, { headers: requestHeaders({ headers: this.start.headers } as IncomingMessage) }));
  }
  send(data: string | Uint8Array): void {
    // Messages to a closing socket are dropped: the core fans out without tracking state.
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(data);
  }
  close(code?: number, reason?: string): void {
    this.socket.close(code, reason);
  }
  bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }
}

function destroySocket(this: Duplex): void {
  this.destroy();
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

function bridge(service: Service, socket: WebSocket, peer: NodeWsPeer, logger: Logger): void {
  socket.on('message', (data, isBinary) => {
    const buf = toBuffer(data);
    const message = isBinary ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : buf.toString('utf8');
    guardHook(logger, 'message', peer, (p) => service.websocket.message(p, message));
  });
  socket.once('close', (code, reason) => guardHook(logger, 'close', peer, (p) => service.websocket.close(p, code, reason.toString())));
  socket.on('error', (err) => logger.warn('websocket error', { peer: peer.id, error: err.message }));
  guardHook(logger, 'open', peer, (p) => service.websocket.open(p));
}

export function attachWebSocket(server: Server, service: Service, opts: WebSocketOptions = {}): AttachedWebSocket {
  const logger = opts.logger ?? consoleLogger;
  const prefix = opts.mountPrefix === undefined ? '' : normalizeMountPrefix(opts.mountPrefix);
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayload ?? 1024 * 1024 });
  // Sockets between 'upgrade' and the end of the handshake: Node no longer tracks them.
  const pending = new Set<Duplex>();

  async function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: string | undefined): Promise<void> {
    pending.add(socket);
    // Not a closure: it stays on the socket for the connection's life and would keep this scope alive.
    socket.on('error', destroySocket);
    const abort = new AbortController();
    const onClose = () => {
      pending.delete(socket);
      abort.abort();
    };
    socket.once('close', onClose);
    try {
      if (req.headers.upgrade?.toLowerCase() !== 'websocket') {
        return await writeRawResponse(socket, service.refuse(400, 'Only WebSocket upgrades are supported.'));
      }
      const start = { url: requestUrl(req, opts.trustProxy, target), headers: req.headers };
      const request = new Request(start.url, { headers: requestHeaders(req), signal: abort.signal });
      const verdict = await service.websocket.upgrade(request);
      if (verdict instanceof Response) return await writeRawResponse(socket, verdict);
      if (socket.destroyed) return;
      wss.handleUpgrade(req, socket, head, (ws) => {
        // The upgrade is over: nothing of it (its abort signal) is kept for the connection's life.
        socket.off('close', onClose);
        pending.delete(socket);
        bridge(service, ws, new NodeWsPeer(start, verdict.context, ws), logger);
      });
    } catch (err) {
      const status = statusOf(err) === 400 ? 400 : 500;
      if (status === 500) logger.error('websocket upgrade failed', errorFields(err));
      await writeRawResponse(socket, service.refuse(status)).catch(() => socket.destroy());
    }
  }

  function listener(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (prefix === '') return void onUpgrade(req, socket, head, undefined);
    const target = underPrefix(req.url ?? '/', prefix);
    if (target !== undefined) return void onUpgrade(req, socket, head, target);
    // Someone else's path: theirs to answer, unless nobody else listens (the socket would hang).
    if (server.listenerCount('upgrade') > 1) return;
    socket.on('error', destroySocket);
    // The cloud shape, as the service's own refusals of an upgrade.
    const refusal = Response.json({ code: 'not_found', message: `No WebSocket endpoint at this path: connect to ${prefix}/ws.` }, { status: 404 });
    void writeRawResponse(socket, refusal).catch(() => socket.destroy());
  }
  server.on('upgrade', listener);

  return {
    async close() {
      server.off('upgrade', listener);
      for (const socket of pending) socket.destroy();
      const peers = [...wss.clients];
      for (const ws of peers) ws.close(1001, 'server shutting down');
      const gone = peers.map((ws) => new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : ws.once('close', () => resolve()))));
      const grace = setTimeout(() => {
        for (const ws of peers) ws.terminate();
      }, 1000);
      await Promise.all(gone);
      clearTimeout(grace);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
