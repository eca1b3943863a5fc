// Mounting a Service in Node: a (req, res) handler for any http.Server or
// framework, and `serve` for a standalone server with WebSockets attached.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { consoleLogger } from '../../core/log.ts';
import type { FetchOptions, Logger, Service } from '../../core/types.ts';
import { errorFields, refusal, statusOf } from './errors.ts';
import { deferredEventStreamResponse, deferredJsonResponse, deferredJsonTextResponse } from './known-body.ts';
import { normalizeMountPrefix, underPrefix } from './mount-prefix.ts';
import { type NodeRequestOptions, type RequestParts, serviceRequest, takesWholeBody } from './request.ts';
import { ClientGoneError, readWholeBody } from './request-body.ts';
import { writeResponse } from './response.ts';
import { attachWebSocket, type WebSocketOptions } from './websocket.ts';

export interface NodeHandlerOptions extends NodeRequestOptions {
  logger?: Logger;
  /**
   * The path the handler is mounted under ('/graph') in a server that also
   * serves other things: requests under it reach the service with the
   * prefix taken off, and every link in the answers carries it. Requests
   * outside it get 404.
   */
  mountPrefix?: string;
}

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** How the core builds the JSON and event streams it answers with: bodies writeResponse sends itself, with no Web stream made for them. */
const ROOT_OPTIONS = {
  jsonResponse: deferredJsonResponse,
  jsonTextResponse: deferredJsonTextResponse,
  eventStreamResponse: deferredEventStreamResponse,
};

async function fail(
  service: Service,
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  opts: NodeRequestOptions & { logger: Logger },
  target: string | undefined,
): Promise<void> {
  // The client left (mid-upload, mid-response): nobody to answer, nothing to report.
  if (res.destroyed || err instanceof ClientGoneError) return void res.destroy();
  const status = statusOf(err);
  if (status === 500) opts.logger.error('node adapter: request failed', { method: req.method, url: req.url, ...errorFields(err) });
  if (res.headersSent) return void res.destroy();
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  await writeResponse(res, refusal(service, status, req, { trustProxy: opts.trustProxy, target }), req).catch(() => res.destroy());
}

/** How a framework hands a request over: what it already took off it (prefix, body). */
export interface MountedRequest extends RequestParts {
  /** The prefix the target was stripped of ('' or none at the root). */
  mountPrefix?: string;
}

/**
 * Serves one request: converts it, asks the service, writes the answer, and
 * answers in the error envelope when any of that fails. Never rejects.
 * Shared by createNodeHandler and the framework adapters built on it.
 */
export async function handleNodeRequest(
  service: Service,
  req: IncomingMessage,
  res: ServerResponse,
  opts: NodeRequestOptions & { logger: Logger },
  mounted: MountedRequest = {},
): Promise<void> {
  try {
    // Refused before a byte is read; the response then closes the connection.
    const { maxBodyBytes } = opts;
    if (maxBodyBytes !== undefined && mounted.body === undefined && Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
      return await writeResponse(res, refusal(service, 413, req, { trustProxy: opts.trustProxy, target: mounted.target }), req);
    }
    // A small body comes off the wire whole first: the core then reads the bytes, with no Web stream made.
    const whole = takesWholeBody(service, req, mounted) ? await readWholeBody(req) : undefined;
    const request = serviceRequest(service, req, res, opts, mounted, whole);
    let options: FetchOptions = mounted.mountPrefix ? { ...ROOT_OPTIONS, mountPrefix: mounted.mountPrefix } : ROOT_OPTIONS;
    if (whole !== undefined) options = { ...options, requestBody: whole };
    await writeResponse(res, await service.fetch(request, options), req);
  } catch (err) {
    await fail(service, req, res, err, opts, mounted.target).catch(() => res.destroy());
  }
}

export function createNodeHandler(service: Service, opts: NodeHandlerOptions = {}): NodeHandler {
  const options = { ...opts, logger: opts.logger ?? consoleLogger };
  // A mistake in the prefix shows when the server is built, not on the first request.
  const prefix = opts.mountPrefix === undefined ? '' : normalizeMountPrefix(opts.mountPrefix);
  if (prefix === '') return (req, res) => void handleNodeRequest(service, req, res, options);
  return (req, res) => {
    const target = underPrefix(req.url ?? '/', prefix);
    // Outside the mount: not the service's path, so its default shape.
    if (target === undefined) return void writeResponse(res, service.refuse(404), req).catch(() => res.destroy());
    void handleNodeRequest(service, req, res, options, { target, mountPrefix: prefix });
  };
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
  const ws = attachWebSocket(server, service, {
    trustProxy: opts.trustProxy,
    maxPayload: opts.maxPayload,
    logger: opts.logger,
    mountPrefix: opts.mountPrefix,
  });
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
