// A small HTTP proxy in front of a test server that records every request
// (method, path, headers) and lets a test answer some requests itself:
// to drop an event stream early, or to play a server with no event stream.
// Everything else goes through untouched, streamed both ways.
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';

export interface Tapped {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

/** Answers the request itself and returns true, or returns false to pass it on. */
export type Intercept = (req: IncomingMessage, res: ServerResponse, seen: Tapped[]) => boolean;

export interface TapProxy {
  url: string;
  requests: Tapped[];
  close(): Promise<void>;
}

export async function startTapProxy(target: string, intercept: Intercept = () => false): Promise<TapProxy> {
  const to = new URL(target);
  const requests: Tapped[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers });
    if (intercept(req, res, requests)) return;
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        // The client going away ends the upstream stream too (an SSE stream would otherwise stay open).
        res.on('close', () => answer.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
