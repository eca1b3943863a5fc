// Mounting a Service in Deno: Deno.serve already speaks Request/Response, so
// requests go to `service.fetch` as they are; WebSocket upgrades ask the
// service first, then Deno.upgradeWebSocket's socket events drive its hooks.
// Deno has no per-server cap on client message size; the core ignores large ones.
import { consoleLogger, errorText } from '../../core/log.ts';
import type { Logger, Service, WsPeer } from '../../core/types.ts';
import { guardHook, type HookName } from '../../core/ws/guard-hook.ts';
import { type DenoHttpServer, type DenoWebSocket, denoGlobal } from './deno-types.ts';

export interface DenoHandlerOptions {
  logger?: Logger;
}

export interface ServeOptions extends DenoHandlerOptions {
  /** Default 127.0.0.1. */
  hostname?: string;
  /** Default 0: a free port chosen by the OS. */
  port?: number;
}

const OPEN = 1;

class DenoWsPeer implements WsPeer {
  readonly id = crypto.randomUUID();
  constructor(
    readonly request: Request,
    readonly context: unknown,
    private readonly socket: DenoWebSocket,
  ) {}
  send(data: string | Uint8Array): void {
    // Messages to a closing socket are dropped: the core fans out without tracking state.
    if (this.socket.readyState === OPEN) this.socket.send(data);
  }
  close(code?: number, reason?: string): void {
    this.socket.close(code, reason);
  }
  bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }
}

export type DenoHandler = ((request: Request) => Promise<Response>) & {
  /** Open WebSocket connections, so a server can say goodbye to them. */
  sockets: Set<DenoWebSocket>;
};

/** A handler for Deno.serve (or any code holding a Request) serving the service and its WebSockets. */
export function denoHandler(service: Service, opts: DenoHandlerOptions = {}): DenoHandler {
  const logger = opts.logger ?? consoleLogger;
  const sockets = new Set<DenoWebSocket>();
  const bridge = (socket: DenoWebSocket, peer: DenoWsPeer) => {
    const guard = (hook: HookName, fn: () => void) => guardHook(logger, hook, peer, fn);
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => {
      sockets.add(socket);
      guard('open', () => service.websocket.open(peer));
    };
    socket.onmessage = ({ data }) => guard('message', () => service.websocket.message(peer, typeof data === 'string' ? data : new Uint8Array(data)));
    socket.onclose = ({ code, reason }) => {
      sockets.delete(socket);
      guard('close', () => service.websocket.close(peer, code, reason));
    };
    socket.onerror = () => {}; // a close event follows; nothing to add
  };
  const handler = async (request: Request) => {
    if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket') return service.fetch(request);
    const verdict = await service.websocket.upgrade(request);
    if (verdict instanceof Response) return verdict;
    let upgraded: ReturnType<ReturnType<typeof denoGlobal>['upgradeWebSocket']>;
    try {
      upgraded = denoGlobal().upgradeWebSocket(request);
    } catch {
      // Deno throws on a handshake it cannot complete (no Sec-WebSocket-Key, say): the client's fault.
      return service.refuse(400, 'The WebSocket handshake could not be completed.', request);
    }
    bridge(upgraded.socket, new DenoWsPeer(request, verdict.context, upgraded.socket));
    return upgraded.response;
  };
  return Object.assign(handler, { sockets });
}

export interface RunningDenoServer {
  server: DenoHttpServer;
  /** e.g. http://127.0.0.1:8189 */
  url: string;
  /** Says goodbye (1001) to WebSocket peers, then stops listening and ends every connection. */
  stop(): Promise<void>;
}

export async function serve(service: Service, opts: ServeOptions = {}): Promise<RunningDenoServer> {
  const logger = opts.logger ?? consoleLogger;
  const hostname = opts.hostname ?? '127.0.0.1';
  const handler = denoHandler(service, opts);
  const abort = new AbortController();
  let listening!: (port: number) => void;
  const port = new Promise<number>((resolve) => (listening = resolve));
  const server = denoGlobal().serve(
    {
      hostname,
      port: opts.port ?? 0,
      signal: abort.signal,
      onListen: (addr) => listening(addr.port),
      onError(err) {
        logger.error('deno adapter: request failed', { error: errorText(err) });
        return service.refuse(500);
      },
    },
    handler,
  );
  const url = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${await port}`;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const socket of handler.sockets) socket.close(1001, 'server shutting down');
      const deadline = Date.now() + 1000;
      while (handler.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      abort.abort();
      await server.finished;
    })());
  return { server, url, stop };
}
