// The route table of the service, its patterns compiled by itty-router.
// Unknown paths answer 404 and known paths with the wrong method 405, each in
// the error shape of the surface the path belongs to.
import { Router } from 'itty-router';
import { urlPath, type ServiceContext } from './context.ts';
import { ApiError } from './errors.ts';
import { surfaceErrorResponse, surfaceOf } from './surface-errors.ts';
import { uploadAsset } from './assets/upload.ts';
import { assetFromHash, headByHash } from './assets/from-hash.ts';
import { deleteAsset, getAsset } from './assets/read.ts';
import { getAssetContent } from './assets/content.ts';
import { openApiDocument } from './openapi.ts';
import { submitJob } from './jobs/submit.ts';
import { cancelJob, getJob, getJobWorkflow } from './jobs/read.ts';
import { jobEvents } from './jobs/events.ts';
import { cloudRoutes } from './cloud/respond.ts';
import { CLOUD_FILES_ROUTES } from './cloud/files-routes.ts';
import { CLOUD_JOBS_ROUTES } from './cloud/jobs-routes.ts';
import { PROXY_ROUTES } from './proxy/routes.ts';

type Handler = (request: Request, ctx: ServiceContext, params: Record<string, string>) => Promise<Response>;
type Route = [method: string, path: string, handler: Handler];

const ROUTES: Route[] = [
  ['POST', '/api/v2/assets', (r, c) => uploadAsset(r, c)],
  ['POST', '/api/v2/assets/from-hash', (r, c) => assetFromHash(r, c)],
  ['HEAD', '/api/v2/assets/by-hash/:hash', (r, c, p) => headByHash(r, c, p.hash)],
  ['GET', '/api/v2/assets/:id', (r, c, p) => getAsset(r, c, p.id)],
  ['DELETE', '/api/v2/assets/:id', (r, c, p) => deleteAsset(r, c, p.id)],
  ['GET', '/api/v2/assets/:id/content', (r, c, p) => getAssetContent(r, c, p.id)],
  ['HEAD', '/api/v2/assets/:id/content', (r, c, p) => getAssetContent(r, c, p.id)],
  ['POST', '/api/v2/jobs', (r, c) => submitJob(r, c)],
  ['GET', '/api/v2/jobs/:id', (r, c, p) => getJob(r, c, p.id)],
  ['GET', '/api/v2/jobs/:id/workflow', (r, c, p) => getJobWorkflow(r, c, p.id)],
  ['POST', '/api/v2/jobs/:id/cancel', (r, c, p) => cancelJob(r, c, p.id)],
  ['GET', '/api/v2/jobs/:id/events', (r, c, p) => jobEvents(r, c, p.id)],
  ['GET', '/api/v2/openapi.json', async () => Response.json(OPENAPI())],
];

/** The cloud-compatible surface: under /api and bare, in its own error shape, outside the v2 document. */
const CLOUD: Route[] = cloudRoutes([...CLOUD_FILES_ROUTES, ...CLOUD_JOBS_ROUTES]);

let document: Record<string, unknown> | undefined;
/** Built on first request: the route table is complete by then. */
const OPENAPI = () => (document ??= openApiDocument(ROUTES.map(([m, p]) => [m, p] as const)));

function decodeParams(raw: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in raw) {
    const value = raw[k];
    try {
      // Without a '%' there is nothing to decode (and nothing that can fail to).
      out[k] = value.includes('%') ? decodeURIComponent(value) : value;
    } catch {
      throw new ApiError('malformed_request', `The path parameter "${k}" is not valid percent-encoding.`);
    }
  }
  return out;
}

/** Same pattern language as itty-router, to tell 404 from 405. */
const patternOf = (path: string) => new RegExp(`^${path.replace(/:(\w+)/g, '[^/]+')}/*$`);

type Dispatch = (request: Request, groups: Record<string, string> | undefined) => Promise<Response>;

export function createRouter(ctx: ServiceContext) {
  // itty-router compiles the patterns; requests are matched here, in the same
  // order, without what its fetch adds to every request (a second URL parse,
  // the query as an object, properties set on the Request).
  const router = Router();
  const all = [...ROUTES, ...CLOUD, ...PROXY_ROUTES];
  for (const [method, path, handler] of all) {
    const dispatch: Dispatch = (req, groups) => handler(req, ctx, decodeParams(groups));
    router[method.toLowerCase() as 'get'](path, dispatch);
  }
  const byMethod = new Map<string, Array<[RegExp, Dispatch]>>();
  for (const [method, regex, handlers] of router.routes) {
    const list = byMethod.get(method) ?? [];
    list.push([regex, handlers[0] as unknown as Dispatch]);
    byMethod.set(method, list);
  }
  const patterns = all.map(([method, path]) => [method, patternOf(path)] as const);

  return async function handle(request: Request): Promise<Response> {
    let path = '';
    try {
      path = urlPath(request.url);
      for (const [regex, dispatch] of byMethod.get(request.method) ?? []) {
        const match = regex.exec(path);
        if (match !== null) return await dispatch(request, match.groups);
      }
      const allowed = [...new Set(patterns.filter(([, re]) => re.test(path)).map(([m]) => m))];
      if (allowed.length === 0) throw new ApiError('not_found', 'No such route.');
      throw new ApiError('method_not_allowed', `Use ${allowed.join(', ')} on this path.`, undefined, {
        Allow: allowed.join(', '),
      });
    } catch (err) {
      const response = surfaceErrorResponse(surfaceOf(path), err, ctx.logger, { method: request.method, url: request.url });
      // HEAD answers carry no body, whatever the status.
      return request.method === 'HEAD' ? new Response(null, { status: response.status, headers: response.headers }) : response;
    }
  };
}
