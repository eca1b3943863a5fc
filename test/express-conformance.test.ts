// The runtime conformance suite against Express: graphrun mounted at /graph
// in an app with routes of its own and express.json() in front, WebSockets
// on the server Express listens on; the deployment 'sdxl' beside it.
import express from 'express';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { startExpressApp } from './helpers/express-app.ts';
import { withSdxl } from './runtime/deployment-gateway.ts';
import { runtimeConformance } from './suites/runtime-conformance.ts';

runtimeConformance('express at /graph', async (opts = {}) => {
  const app = await startExpressApp({
    before: [express.json()],
    service: { token: opts.token },
    wrap: (service, dir) => withSdxl(service, dir, (filename, blobs) => createSqliteStorage({ filename, blobs }), opts.token),
  });
  return { base: app.base, close: () => app.close() };
});
