// The video surface (/proxy/videogen): multi-frame tasks created and read,
// every error in its `{message, details}` body, and the OpenAPI document of
// this route table.
import { serveOpenApi } from '../../http/openapi.ts';
import type { Route, SurfaceDefinition } from '../../http/surface.ts';
import { videoErrorResponse } from './errors.ts';
import { videoOpenApi } from './openapi.ts';
import { createTask, getTask } from './tasks-api.ts';

export function videoSurface(): SurfaceDefinition {
  const routes: Route[] = [
    ['POST', '/proxy/videogen/multiframe', (r, c) => createTask(r, c)],
    ['GET', '/proxy/videogen/tasks/:task_id', (r, c, p) => getTask(r, c, p.task_id)],
    ['GET', '/proxy/videogen/openapi.json', serveOpenApi(() => videoOpenApi(routes))],
  ];
  return { name: 'video', mounts: ['/proxy/videogen/*'], routes, renderError: videoErrorResponse };
}
