// Test server on Deno: the Deno adapter over node:sqlite and fs blobs.
// Run: deno run -A test/runtime/deno-server.ts (with GRAPHRUN_DATA set).
import { serve } from '../../adapters/deno/server.ts';
import { createNodeSqliteStorage } from '../../storage/sql/node-sqlite.ts';
import { runEntry } from './entry.ts';

await runEntry({
  storage: (filename, blobs) => createNodeSqliteStorage({ filename, blobs }),
  serve: (service) => serve(service, { hostname: '127.0.0.1', port: 0 }),
});
