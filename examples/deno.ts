// A standalone Deno server: node:sqlite + filesystem blobs under GRAPHRUN_DATA
// (default ./data), Deno.serve on GRAPHRUN_PORT (default 8189).
// Run: npx deno run -A examples/deno.ts
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { serve } from '../adapters/deno/index.ts';
import { createService } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createNodeSqliteStorage } from '../storage/sql/node-sqlite.ts';

const data = process.env.GRAPHRUN_DATA || './data';
mkdirSync(data, { recursive: true });
const blobs = await createFsBlobStore({ dir: join(data, 'blobs') });
const storage = await createNodeSqliteStorage({ filename: join(data, 'graphrun.db'), blobs });
const service = await createService({ storage });
const server = await serve(service, { hostname: '127.0.0.1', port: Number(process.env.GRAPHRUN_PORT || 8189) });
console.log(`listening on ${server.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await server.stop();
    await service.close();
    process.exit(0);
  });
}
