// Server process of bench/adapters.ts on Deno: the Deno adapter over
// node:sqlite and a bare Deno.serve answering with the captured response.

import { denoGlobal } from '../adapters/deno/deno-types.ts';
import { serve } from '../adapters/deno/server.ts';
import { createNodeSqliteStorage } from '../storage/sql/node-sqlite.ts';
import { runBenchServer } from './adapters-server.ts';

await runBenchServer({
  storage: (filename, blobs) => createNodeSqliteStorage({ filename, blobs }),
  serve: (service) => serve(service, { hostname: '127.0.0.1', port: 0 }),
  async serveBare({ status, headers, body }) {
    const abort = new AbortController();
    let listening!: (port: number) => void;
    const port = new Promise<number>((resolve) => (listening = resolve));
    const server = denoGlobal().serve(
      { hostname: '127.0.0.1', port: 0, signal: abort.signal, onListen: (addr) => listening(addr.port) },
      () => new Response(body, { status, headers }),
    );
    return { url: `http://127.0.0.1:${await port}`, stop: async () => (abort.abort(), await server.finished) };
  },
});
