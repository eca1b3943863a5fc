// Mounting a Service in Node: a (req, res) handler for any http.Server or
// framework, and `serve` for a standalone server with WebSockets attached.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger, Service } from '../../core/types.ts';
import { acceptKnownBodies } from '../../core/known-body.ts';
import { consoleLogger } from '../../core/log.ts';
import { errorFields, errorResponse, statusOf } from './errors.ts';
import { incomingMessageToRequest, type NodeRequestOptions } from './request.ts';
import { ClientGoneError } from './request-body.ts';
import { writeResponse } from './response.ts';
import { attachWebSocket, type WebSocketOptions } from './websocket.ts';

export interface NodeHandlerOptions extends NodeRequestOptions {
  logger?: Logger;
}

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

async function fail(req: IncomingMessage, res: ServerResponse, err: unknown, logger: Logger): Promise<void> {
  // The client left (mid-upload, mid-response): nobody to answer, nothing to report.
  if (res.destroyed || err instanceof ClientGoneError) return void res.destroy();
  const status = statusOf(err);
  if (status === 500) logger.error('node adapter: request failed', { method: req.method, url: req.url, ...errorFields(err) });
  if (res.headersSent) return void res.destroy();
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  await writeResponse(res, errorResponse(status), req).catch(() => res.destroy());
}

export function createNodeHandler(service: Service, opts: NodeHandlerOptions = {}): NodeHandler {
  const logger = opts.logger ?? consoleLogger;
  const { maxBodyBytes } = opts;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      // Refused before a byte is read; the response then closes the connection.
      if (maxBodyBytes !== undefined && Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
        return await writeResponse(res, errorResponse(413), req);
      }
      const request = incomingMessageToRequest(req, res, opts);
      // writeResponse sends a known body itself, so the core need not build a stream for it.
      acceptKnownBodies(request);
      const response = await service.fetch(request);
      await writeResponse(res, response, req);
    } catch (err) {
      await fail(req, res, err, logger);
    }
  };
  return (req, res) => void handle(req, res).catch(() => res.destroy());
}

export interface ServeOptions extends NodeHandlerOptions, Pick<WebSocketOptions, 'maxPayload'> {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port chosen by the OS. */
  port?: number;
}

export interface RunningServer {
  server: Server;
  /** e.g. http://127.0.0.1:8189 */
  url: string;
  /** Stops listening and drops every connection, HTTP and WebSocket. */
  close(): Promise<void>;
}

export async function serve(service: Service, opts: ServeOptions = {}): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const server = createServer(createNodeHandler(service, opts));
  const ws = attachWebSocket(server, service, { trustProxy: opts.trustProxy, maxPayload: opts.maxPayload, logger: opts.logger });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await ws.close();
      await stopped;
    })());
  return { server, url, close };
}
