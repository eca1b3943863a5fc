// Writes a Web Response straight onto a socket that Node's HTTP layer has let
// go of (an upgrade request), then closes it: how a refused upgrade answers.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

const SKIPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'set-cookie', 'upgrade']);

export async function writeRawResponse(socket: Duplex, response: Response): Promise<void> {
  // Refusals are small (a JSON error); buffering one is fine.
  const body = Buffer.from(await response.arrayBuffer());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const reason = response.statusText || STATUS_CODES[response.status] || '';
  const lines = [`HTTP/1.1 ${response.status} ${reason}`];
  // Header values of a Headers object cannot hold CR/LF, so nothing can be injected here.
  for (const [name, value] of response.headers) if (!SKIPPED.has(name)) lines.push(`${name}: ${value}`);
  for (const cookie of response.headers.getSetCookie()) lines.push(`set-cookie: ${cookie}`);
  lines.push(`content-length: ${body.byteLength}`, 'connection: close', '', '');
  socket.once('finish', () => socket.destroy());
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]));
}
