// The embedded default as a library: SQLite + filesystem blobs behind the
// Node adapter. Run: npx tsx examples/node-server.ts
import { createService } from '../core/index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { serve } from '../adapters/node/server.ts';

const blobs = await createFsBlobStore({ dir: './data/blobs' });
const storage = await createSqliteStorage({ filename: './data/graphrun.db', blobs });
const service = await createService({ storage, defaultRetentionSeconds: 7 * 24 * 3600 });
const server = await serve(service, { host: '127.0.0.1', port: 8189 });
console.log(`listening on ${server.url}`);

process.once('SIGINT', async () => {
  await server.close();
  await service.close();
});
