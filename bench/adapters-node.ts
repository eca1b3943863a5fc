// Server process of bench/adapters.ts on Node: the Node adapter's `serve` and
// a bare node:http server; with the argument `express`, the Express adapter
// mounted at the root of an Express app and a bare Express route instead.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '../adapters/node/server.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { type CapturedResponse, runBenchServer } from './adapters-server.ts';

async function listen(listener: RequestListener): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const bareNode =
  ({ status, headers, body }: CapturedResponse): RequestListener =>
  (req, res) => {
    req.resume();
    res.writeHead(status, headers);
    res.end(body);
  };

const express = process.argv[2] === 'express';

await runBenchServer({
  storage: (filename, blobs) => createSqliteStorage({ filename, blobs }),
  async serve(service) {
    if (!express) {
      const running = await serve(service, { host: '127.0.0.1', port: 0 });
      return { url: running.url, stop: () => running.close() };
    }
    const { default: createApp } = await import('express');
    const { graphrun } = await import('../adapters/express/index.ts');
    const app = createApp();
    app.use(graphrun(service));
    return listen(app);
  },
  async serveBare(captured) {
    if (!express) return listen(bareNode(captured));
    const { default: createApp } = await import('express');
    const app = createApp();
    // The same route shape the service answers on, so Express's routing is paid on both sides.
    app.get('/api/v2/jobs/:id', bareNode(captured) as never);
    return listen(app);
  },
});
