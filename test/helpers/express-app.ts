// A real Express app on a random port, as an application that embeds the
// service would have it: its own routes around graphrun mounted under a
// prefix, optional body parsers in front of everything, WebSockets on the
// server Express listens on. Storage: SQLite + fs blobs in a temporary directory.

import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type RequestHandler } from 'express';
import { attachWebSocket, type ExpressOptions, graphrun } from '../../adapters/express/index.ts';
import { createService, type Logger, type Service, type ServiceOptions, silentLogger } from '../../index.ts';
import { createFsBlobStore } from '../../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../../storage/sql/sqlite.ts';

export interface ExpressAppOptions {
  /** Middleware the app runs before everything else (body parsers). */
  before?: RequestHandler[];
  /** Where graphrun is mounted. Default /graph. */
  prefix?: string;
  service?: Partial<ServiceOptions>;
  adapter?: ExpressOptions;
  logger?: Logger;
  /** What is mounted instead of the service (a deployment gateway over it), given its temporary directory. */
  wrap?: (service: Service, dir: string) => Promise<Service>;
  /** Called with the app before graphrun is mounted (e.g. app.set). */
  configure?: (app: express.Express) => void;
}

export interface ExpressApp {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** origin + prefix: where the service answers. */
  base: string;
  service: Service;
  server: Server;
  close(): Promise<void>;
}

export async function startExpressApp(opts: ExpressAppOptions = {}): Promise<ExpressApp> {
  const prefix = opts.prefix ?? '/graph';
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-express-'));
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });
  const created = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, ...opts.service });
  const service = opts.wrap ? await opts.wrap(created, dir) : created;

  const app = express();
  opts.configure?.(app);
  for (const middleware of opts.before ?? []) app.use(middleware);
  app.get('/hello', (_req, res) => void res.type('text/plain').send('hello from the app'));
  app.post('/echo', (req, res) => void res.json({ got: req.body ?? null }));
  app.use(prefix, graphrun(service, { logger: opts.logger ?? silentLogger, ...opts.adapter }));
  // The app's own 404, in its own shape: what graphrun must not answer for.
  app.use((_req, res) => void res.status(404).type('text/plain').send('app: not here'));

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const ws = attachWebSocket(server, service, { mountPrefix: prefix, logger: opts.logger ?? silentLogger });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    base: origin + prefix,
    service,
    server,
    async close() {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await ws.close();
      await stopped;
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
