// The runtime conformance suite on the machine's Node: the Node adapter's
// `serve` over SQLite (better-sqlite3) and fs blobs in a temporary directory,
// with the deployment 'sdxl' beside it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../adapters/node/server.ts';
import { createService, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { withSdxl } from './runtime/deployment-gateway.ts';
import { runtimeConformance } from './suites/runtime-conformance.ts';

runtimeConformance(`node ${process.version}`, async (opts = {}) => {
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-runtime-node-'));
  const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
  const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });
  const created = await createService({ storage, logger: silentLogger, sweepIntervalMs: 0, token: opts.token });
  const service = await withSdxl(created, dir, (filename, b) => createSqliteStorage({ filename, blobs: b }), opts.token);
  const server = await serve(service, { host: '127.0.0.1', port: 0 });
  return {
    base: server.url,
    async close() {
      await server.close();
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
