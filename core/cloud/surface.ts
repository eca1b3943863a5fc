// The cloud-compatible surface: every route served both under `/api` and
// bare (`/prompt`, `/view`, ...), as the reference engine serves them, and
// answered in the cloud contract's error body `{code, message}`. The bare
// paths it owns are the first segments of its routes.
import type { Route, SurfaceDefinition } from '../http/surface.ts';
import { CLOUD_FILES_ROUTES } from './files-routes.ts';
import { CLOUD_JOBS_ROUTES } from './jobs-routes.ts';
import { cloudErrorResponse } from './respond.ts';

export function cloudSurface(): SurfaceDefinition {
  const declared = [...CLOUD_FILES_ROUTES, ...CLOUD_JOBS_ROUTES];
  const routes = declared.flatMap(([method, path, handler]): Route[] => [
    [method, `/api${path}`, handler],
    [method, path, handler],
  ]);
  const bare = [...new Set(declared.map(([, path]) => `/${path.split('/')[1]}/*`))];
  return { name: 'cloud', mounts: ['/api/*', ...bare], routes, renderError: cloudErrorResponse };
}
