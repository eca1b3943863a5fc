// The service inside an existing Node `http` server, next to the app's own
// routes: everything under /graph is graphrun (HTTP and the /graph/ws
// WebSocket), the rest stays the app's. Data: SQLite + files under
// GRAPHRUN_DATA (default ./data). Run: npx tsx examples/node-mount.ts

import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { attachWebSocket, createNodeHandler } from '../adapters/node/index.ts';
import { createService } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

const port = Number(process.env.GRAPHRUN_PORT || 8189);
const data = process.env.GRAPHRUN_DATA || './data';

await mkdir(data, { recursive: true });
const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
const storage = await createSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
const service = await createService({ storage, token: process.env.GRAPHRUN_TOKEN || undefined });

// Links the service hands out (asset urls, job urls) carry the prefix.
const graphrun = createNodeHandler(service, { mountPrefix: '/graph' });

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/graph' || url.startsWith('/graph/') || url.startsWith('/graph?')) return graphrun(req, res);
  if (url === '/') return void res.end('The app itself. Workflows run under /graph.\n');
  res.statusCode = 404;
  res.end('Not found\n');
});
const ws = attachWebSocket(server, service, { mountPrefix: '/graph' });

server.once('error', (err) => {
  console.error(`could not listen on port ${port}: ${err.message}`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  const { port: actual } = server.address() as AddressInfo;
  console.log(`graphrun mounted at http://127.0.0.1:${actual}/graph (the app at http://127.0.0.1:${actual}/)`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    const stopped = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await ws.close();
    await stopped;
    await service.close();
  });
}
