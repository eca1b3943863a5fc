// Test server on Bun: the Bun adapter over bun:sqlite and fs blobs.
// Run: bun test/runtime/bun-server.ts (with GRAPHRUN_DATA set).
import { serve } from '../../adapters/bun/server.ts';
import { createBunSqliteStorage } from '../../storage/sql/bun-sqlite.ts';
import { runEntry } from './entry.ts';

await runEntry({
  storage: (filename, blobs) => createBunSqliteStorage({ filename, blobs }),
  serve: async (service) => serve(service, { hostname: '127.0.0.1', port: 0 }),
});
