// Server process of bench/adapters.ts on Bun: the Bun adapter over bun:sqlite
// and a bare Bun.serve answering with the captured response.

import { bunGlobal } from '../adapters/bun/bun-types.ts';
import { serve } from '../adapters/bun/server.ts';
import { createBunSqliteStorage } from '../storage/sql/bun-sqlite.ts';
import { runBenchServer } from './adapters-server.ts';

await runBenchServer({
  storage: (filename, blobs) => createBunSqliteStorage({ filename, blobs }),
  async serve(service) {
    return serve(service, { hostname: '127.0.0.1', port: 0 });
  },
  async serveBare({ status, headers, body }) {
    const server = bunGlobal().serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response(body, { status, headers }),
      websocket: { open() {}, message() {}, close() {} },
    });
    return { url: `http://127.0.0.1:${server.port}`, stop: async () => void (await server.stop(true)) };
  },
});
