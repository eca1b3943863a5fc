// A TCP port on 127.0.0.1 nobody listens on now, for a server a test starts
// as a process of its own (it may be taken before that server binds it: the
// callers retry or fail clearly).
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
