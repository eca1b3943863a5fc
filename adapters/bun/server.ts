// Mounting a Service in Bun: Bun.serve already speaks Request/Response, so
// requests go to `service.fetch` as they are; WebSocket upgrades ask the
// service first, then Bun's native socket events are wired to its hooks.
import { consoleLogger } from '../../core/log.ts';
import type { Logger, Service, WsPeer } from '../../core/types.ts';
import { guardHook, type HookName } from '../../core/ws/guard-hook.ts';
import { type BunServeOptions, type BunServer, type BunServerWebSocket, bunGlobal } from './bun-types.ts';

export interface BunHandlerOptions {
  logger?: Logger;
  /** Largest message a client may send, bytes. Default 1 MiB: clients send small JSON. */
  maxPayloadLength?: number;
}

export interface ServeOptions extends BunHandlerOptions {
  /** Default 127.0.0.1. */
  hostname?: string;
  /** Default 0: a free port chosen by the OS. */
  port?: number;
  /**
   * Seconds a connection may stay silent. Default 60; must stay above the
   * service's SSE keepalive (15 s), or Bun (default 10 s) cuts quiet event streams.
   */
  idleTimeout?: number;
}

interface PeerData {
  request: Request;
  context: unknown;
  peer?: BunWsPeer;
}

const OPEN = 1;

class BunWsPeer implements WsPeer {
  readonly id = crypto.randomUUID();
  constructor(private readonly ws: BunServerWebSocket<PeerData>) {}
  get request(): Request {
    return this.ws.data.request;
  }
  get context(): unknown {
    return this.ws.data.context;
  }
  send(data: string | Uint8Array): void {
    // Messages to a closing socket are dropped: the core fans out without tracking state.
    if (this.ws.readyState === OPEN) this.ws.send(data);
  }
  close(code?: number, reason?: string): void {
    this.ws.close(code, reason);
  }
  bufferedAmount(): number {
    return this.ws.getBufferedAmount();
  }
}

export type BunHandlers = Pick<BunServeOptions<PeerData>, 'fetch' | 'error' | 'websocket'> & {
  /** Open WebSocket connections, so a server can say goodbye to them. */
  peers: Set<BunServerWebSocket<PeerData>>;
};

/** `fetch`, `error` and `websocket` for Bun.serve: spread them into your own options to mount the service. */
export function bunHandlers(service: Service, opts: BunHandlerOptions = {}): BunHandlers {
  const logger = opts.logger ?? consoleLogger;
  const peers = new Set<BunServerWebSocket<PeerData>>();
  // The peer is set in `open`, before any hook runs.
  const guard = (hook: HookName, ws: BunServerWebSocket<PeerData>, fn: (peer: BunWsPeer) => void) => guardHook(logger, hook, ws.data.peer!, fn);
  return {
    peers,
    async fetch(request: Request, server: BunServer) {
      if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket') return service.fetch(request);
      const verdict = await service.websocket.upgrade(request);
      if (verdict instanceof Response) return verdict;
      if (server.upgrade<PeerData>(request, { data: { request, context: verdict.context } })) return undefined;
      return service.refuse(400, 'The WebSocket handshake could not be completed.', request);
    },
    error(err: Error) {
      logger.error('bun adapter: request failed', { error: err.stack ?? err.message });
      return service.refuse(500);
    },
    websocket: {
      maxPayloadLength: opts.maxPayloadLength ?? 1024 * 1024,
      open(ws) {
        ws.data.peer = new BunWsPeer(ws);
        peers.add(ws);
        guard('open', ws, (peer) => service.websocket.open(peer));
      },
      message(ws, message) {
        guard('message', ws, (peer) => service.websocket.message(peer, message));
      },
      close(ws, code, reason) {
        peers.delete(ws);
        guard('close', ws, (peer) => service.websocket.close(peer, code, reason));
      },
    },
  };
}

export interface RunningBunServer {
  server: BunServer;
  /** e.g. http://127.0.0.1:8189 */
  url: string;
  /** Says goodbye (1001) to WebSocket peers, then stops listening and drops every connection. */
  stop(): Promise<void>;
}

export function serve(service: Service, opts: ServeOptions = {}): RunningBunServer {
  const hostname = opts.hostname ?? '127.0.0.1';
  const { peers, ...handlers } = bunHandlers(service, opts);
  const server = bunGlobal().serve<PeerData>({
    hostname,
    port: opts.port ?? 0,
    idleTimeout: opts.idleTimeout ?? 60,
    // The service enforces its own upload limit while streaming, in its error shape.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    ...handlers,
  });
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${server.port}`;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const ws of peers) ws.close(1001, 'server shutting down');
      const deadline = Date.now() + 1000;
      while (peers.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await server.stop(true);
    })());
  return { server, url, stop };
}
