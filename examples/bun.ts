// A standalone Bun server: bun:sqlite + filesystem blobs under GRAPHRUN_DATA
// (default ./data), Bun.serve on GRAPHRUN_PORT (default 8189).
// Run: npx bun examples/bun.ts
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from '../adapters/bun/index.ts';
import { createService } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createBunSqliteStorage } from '../storage/sql/bun-sqlite.ts';

const data = process.env.GRAPHRUN_DATA || './data';
mkdirSync(data, { recursive: true });
const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
const storage = await createBunSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
const service = await createService({ storage });
const server = serve(service, { hostname: '127.0.0.1', port: Number(process.env.GRAPHRUN_PORT || 8189) });
console.log(`listening on ${server.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await server.stop();
    await service.close();
    process.exit(0);
  });
}
