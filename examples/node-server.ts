// The embedded default as a library: SQLite + filesystem blobs under
// GRAPHRUN_DATA (default ./data) behind the Node adapter, on GRAPHRUN_PORT
// (default 8189). Run: npx tsx examples/node-server.ts
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve } from '../adapters/node/server.ts';
import { createService } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

const port = Number(process.env.GRAPHRUN_PORT || 8189);
const data = process.env.GRAPHRUN_DATA || './data';

await mkdir(data, { recursive: true });
const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
const storage = await createSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
const service = await createService({ storage, defaultRetentionSeconds: 7 * 24 * 3600 });
const server = await serve(service, { host: '127.0.0.1', port });
console.log(`graphrun listening on ${server.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await server.close();
    await service.close();
  });
}
