// Node http <-> the fake worker's routes: a request as a Web Request (body
// streamed), a route's answer written back (a file streamed from disk), and
// the failure switch that makes a route answer an error status.
import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FakeWorkerFailures } from './comfyui-failures.ts';
import type { RouteResult } from './comfyui-routes.ts';

export function toWebRequest(req: IncomingMessage, url: URL): Request {
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, {
    method,
    headers: req.headers as Record<string, string>,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    duplex: 'half',
  } as RequestInit);
}

/** Applies a matching `failures.routes` entry (counting down its `times`); true when it answered (or hangs). */
export function failRoute(failures: FakeWorkerFailures, method: string, path: string, res: ServerResponse): boolean {
  const failing = failures.routes.find((f) => {
    const [m, p] = f.route.includes(' ') ? f.route.split(' ') : [null, f.route];
    return (m === null || m === method) && (path === p || path.startsWith(`${p}/`));
  });
  if (!failing) return false;
  if (failing.times !== undefined && --failing.times <= 0) failures.routes.splice(failures.routes.indexOf(failing), 1);
  if (failing.hang) return true; // never answered; the connection stays open until cut
  if (failing.cut) {
    res.socket?.destroy();
    return true;
  }
  res.writeHead(failing.status ?? 500, { 'content-type': 'text/plain' }).end('500 Internal Server Error\n\nServer got itself in trouble');
  return true;
}

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  txt: 'text/plain',
  flac: 'audio/flac',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  webm: 'video/webm',
};

export async function writeResult(res: ServerResponse, out: RouteResult): Promise<void> {
  if ('file' in out) {
    let size: number;
    try {
      const st = statSync(out.file);
      if (!st.isFile()) throw new Error('not a file');
      size = st.size;
    } catch {
      res.writeHead(404).end();
      return;
    }
    const type = CONTENT_TYPES[out.name.split('.').pop()!.toLowerCase()] ?? 'application/octet-stream';
    res.writeHead(200, { 'content-type': type, 'content-length': size, 'content-disposition': `filename="${out.name}"` });
    createReadStream(out.file).pipe(res);
    return;
  }
  res.writeHead(out.status, Object.fromEntries(out.headers));
  res.end(out.body ? Buffer.from(await out.arrayBuffer()) : undefined);
}
