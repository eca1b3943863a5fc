// The music surface (/proxy/musicgen): text-to-music generation streamed as
// NDJSON, every error in its `{detail: {code, message}}` body, and the
// OpenAPI document of this route table.
import { serveOpenApi } from '../../http/openapi.ts';
import type { Route, SurfaceDefinition } from '../../http/surface.ts';
import { musicErrorResponse } from './errors.ts';
import { generateMusic } from './generate.ts';
import { musicOpenApi } from './openapi.ts';

export function musicSurface(): SurfaceDefinition {
  const routes: Route[] = [
    ['POST', '/proxy/musicgen/t2m/generate', (r, c) => generateMusic(r, c)],
    ['GET', '/proxy/musicgen/openapi.json', serveOpenApi(() => musicOpenApi(routes))],
  ];
  return { name: 'music', mounts: ['/proxy/musicgen/*'], routes, renderError: musicErrorResponse };
}
