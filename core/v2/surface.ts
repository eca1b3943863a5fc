// The v2 surface (/api/v2): assets and jobs, answered in the error envelope
// `{error: {code, message, details?}}`, and the OpenAPI document generated
// from this route table. Paths under /api/v2 that match no route are its
// 404s and 405s.
import { getAssetContent } from '../assets/content.ts';
import { assetFromHash, headByHash } from '../assets/from-hash.ts';
import { deleteAsset, getAsset } from '../assets/read.ts';
import { uploadAsset } from '../assets/upload.ts';
import { serveOpenApi } from '../http/openapi.ts';
import type { Route, SurfaceDefinition } from '../http/surface.ts';
import { jobEvents } from '../jobs/events.ts';
import { listJobs } from '../jobs/list.ts';
import { cancelJob, getJob, getJobWorkflow } from '../jobs/read.ts';
import { submitJob } from '../jobs/submit.ts';
import { v2ErrorResponse } from './errors.ts';
import { v2OpenApi } from './openapi.ts';

export function v2Surface(): SurfaceDefinition {
  const routes: Route[] = [
    ['POST', '/api/v2/assets', (r, c) => uploadAsset(r, c)],
    ['POST', '/api/v2/assets/from-hash', (r, c) => assetFromHash(r, c)],
    ['HEAD', '/api/v2/assets/by-hash/:hash', (r, c, p) => headByHash(r, c, p.hash)],
    ['GET', '/api/v2/assets/:id', (r, c, p) => getAsset(r, c, p.id)],
    ['DELETE', '/api/v2/assets/:id', (r, c, p) => deleteAsset(r, c, p.id)],
    ['GET', '/api/v2/assets/:id/content', (r, c, p) => getAssetContent(r, c, p.id)],
    ['HEAD', '/api/v2/assets/:id/content', (r, c, p) => getAssetContent(r, c, p.id)],
    ['POST', '/api/v2/jobs', (r, c) => submitJob(r, c)],
    ['GET', '/api/v2/jobs', (r, c) => listJobs(r, c)],
    ['GET', '/api/v2/jobs/:id', (r, c, p) => getJob(r, c, p.id)],
    ['GET', '/api/v2/jobs/:id/workflow', (r, c, p) => getJobWorkflow(r, c, p.id)],
    ['POST', '/api/v2/jobs/:id/cancel', (r, c, p) => cancelJob(r, c, p.id)],
    ['GET', '/api/v2/jobs/:id/events', (r, c, p) => jobEvents(r, c, p.id)],
    // Built on first request, from the table above (which it documents whole).
    ['GET', '/api/v2/openapi.json', serveOpenApi(() => v2OpenApi(routes))],
  ];
  return { name: 'v2', mounts: ['/api/v2/*'], routes, renderError: v2ErrorResponse };
}
