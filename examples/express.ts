// The service in an Express app, mounted under /graph beside the app's own
// routes; WebSockets at /graph/ws on the same server. Data:
// SQLite + files under GRAPHRUN_DATA (default ./data).
// Run: npx tsx examples/express.ts

import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import { attachWebSocket, graphrun } from '../adapters/express/index.ts';
import { createService } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

const port = Number(process.env.GRAPHRUN_PORT || 8189);
const data = process.env.GRAPHRUN_DATA || './data';

await mkdir(data, { recursive: true });
const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
const storage = await createSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
const service = await createService({ storage, token: process.env.GRAPHRUN_TOKEN || undefined });

const app = express();
app.get('/', (_req, res) => void res.send('The app itself. Workflows run under /graph.\n'));
// The JSON parser only on the app's own route: app-wide, its 100 KB limit would
// also refuse graphrun's larger bodies (workflows, base64 key frames), which
// graphrun reads and limits itself.
app.post('/notes', express.json(), (req, res) => void res.status(201).json({ saved: req.body }));
app.use('/graph', graphrun(service));

const server = app.listen(port, '127.0.0.1', (err) => {
  if (err) {
    console.error(`could not listen on port ${port}: ${err.message}`);
    process.exit(1);
  }
  const { port: actual } = server.address() as AddressInfo;
  console.log(`graphrun mounted at http://127.0.0.1:${actual}/graph (the app at http://127.0.0.1:${actual}/)`);
});
const ws = attachWebSocket(server, service, { mountPrefix: '/graph' });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    const stopped = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await ws.close();
    await stopped;
    await service.close();
  });
}
