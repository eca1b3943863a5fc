// The video surface (/proxy/videogen): multi-frame tasks created and read,
// every error in its `{message, details}` body.
import type { SurfaceDefinition } from '../../http/surface.ts';
import { videoErrorResponse } from './errors.ts';
import { createTask, getTask } from './tasks-api.ts';

export function videoSurface(): SurfaceDefinition {
  return {
    name: 'video',
    mounts: ['/proxy/videogen/*'],
    routes: [
      ['POST', '/proxy/videogen/multiframe', (r, c) => createTask(r, c)],
      ['GET', '/proxy/videogen/tasks/:task_id', (r, c, p) => getTask(r, c, p.task_id)],
    ],
    renderError: videoErrorResponse,
  };
}
