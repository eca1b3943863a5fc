// The cloud-compatible surface: every route served both under `/api` and
// bare (`/prompt`, `/view`, ...), as the reference engine serves them, and
// answered in the cloud contract's error body `{code, message}`. It owns
// every path the other surfaces (/api/v2, /proxy/...) do not: the
// reference's server answers any path, so a path that is no route here is
// answered as it answers one, a 404 (or a 405 naming the methods the path
// has) with aiohttp's plain-text body `404: Not Found`. Its OpenAPI document
// is at /api/openapi.json.
import { serveOpenApi } from '../http/openapi.ts';
import type { Route, SurfaceDefinition } from '../http/surface.ts';
import { CLOUD_FILES_ROUTES } from './files-routes.ts';
import { CLOUD_JOBS_ROUTES } from './jobs-routes.ts';
import { cloudOpenApi } from './openapi.ts';
import { cloudErrorResponse } from './respond.ts';

const TEXT = 'text/plain; charset=utf-8';

/** aiohttp's answer to a path no route takes: its status line as a text body. */
function referenceUnrouted(status: 404 | 405, allowed: string[]): Response {
  if (status === 404) return new Response('404: Not Found', { status, headers: { 'content-type': TEXT } });
  return new Response('405: Method Not Allowed', { status, headers: { 'content-type': TEXT, allow: allowed.join(', ') } });
}

export function cloudSurface(): SurfaceDefinition {
  const declared = [...CLOUD_FILES_ROUTES, ...CLOUD_JOBS_ROUTES];
  const routes = declared.flatMap(([method, path, handler]): Route[] => [
    [method, `/api${path}`, handler],
    [method, path, handler],
  ]);
  // Only under /api: the bare /openapi.json is the operator surface's document.
  routes.push(['GET', '/api/openapi.json', serveOpenApi(() => cloudOpenApi(routes))]);
  return { name: 'cloud', mounts: ['/*'], routes, renderError: cloudErrorResponse, renderUnrouted: referenceUnrouted };
}
