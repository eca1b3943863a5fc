// The operator's surface: health and readiness probes, Prometheus metrics,
// the fleet's status, its engine servers, the web dashboard and this
// surface's OpenAPI document, at the root of the service (or of its mount
// prefix). Errors in the v2 envelope.
import { getDeployment, startDeployment, stopDeployment } from '../deployments/ops.ts';
import { serveOpenApi } from '../http/openapi.ts';
import type { Route, SurfaceDefinition } from '../http/surface.ts';
import { v2ErrorResponse } from '../v2/errors.ts';
import { dashboardRoutes } from './dashboard/serve.ts';
import { metrics } from './metrics.ts';
import { opsOpenApi } from './openapi.ts';
import { readyz } from './readiness.ts';
import { addServer, drainServer, listServers, removeServer } from './servers/handlers.ts';
import { opsStatus } from './status.ts';

/** Paths this surface owns; everything else at the root stays the cloud surface's. */
export const OPS_MOUNTS = ['/', '/healthz', '/readyz', '/metrics', '/openapi.json', '/ops/*', '/dashboard/*'];

export function opsSurface(): SurfaceDefinition {
  const routes: Route[] = [
    // Alive: answers without touching storage or the engine, so a slow database never restarts the process.
    ['GET', '/healthz', async () => Response.json({ status: 'ok' }, { headers: { 'Cache-Control': 'no-store' } })],
    ['HEAD', '/healthz', async () => new Response(null, { headers: { 'Cache-Control': 'no-store' } })],
    ['GET', '/readyz', readyz],
    ['HEAD', '/readyz', readyz],
    ['GET', '/metrics', metrics],
    ['GET', '/ops/status', opsStatus],
    // The engine servers of the pool, changed at run time (core/ops/servers).
    ['GET', '/ops/servers', listServers],
    ['POST', '/ops/servers', addServer],
    ['POST', '/ops/servers/:id/drain', drainServer],
    ['DELETE', '/ops/servers/:id', removeServer],
    // This deployment's condition and the operator's moves (core/deployments).
    ['GET', '/ops/deployment', getDeployment],
    ['POST', '/ops/deployment/stop', stopDeployment],
    ['POST', '/ops/deployment/start', startDeployment],
    // Built on first request, from this whole table (a route it has no operation for fails the build).
    ['GET', '/openapi.json', serveOpenApi(() => opsOpenApi(routes))],
    ...dashboardRoutes(),
  ];
  return { name: 'ops', mounts: OPS_MOUNTS, routes, renderError: v2ErrorResponse };
}
