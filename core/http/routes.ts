// The service's router: five surfaces, each owning its paths, its routes and
// its error shape (surface.ts). A request goes to the surface whose
// mount matches its path; the cloud surface, last, takes every path the
// others do not (the reference engine's server answers any path). An
// adapter's own refusals (a body over its limit, an unreadable request) are
// answered through the same table, by the surface that owns the path.

import { promptErrorResponse } from '../cloud/prompt-errors.ts';
import { cloudSurface } from '../cloud/surface.ts';
import type { ServiceContext } from '../context.ts';
import { deploymentRefusal, isPromptPath } from '../deployments/gate.ts';
import { ApiError, type ErrorCode, GENERIC_500 } from '../errors.ts';
import { silentLogger } from '../log.ts';
import { opsSurface } from '../ops/surface.ts';
import { musicSurface } from '../proxy/music/surface.ts';
import { videoSurface } from '../proxy/video/surface.ts';
import type { RefusalStatus } from '../types.ts';
import { v2Surface } from '../v2/surface.ts';
import { urlPath } from './links.ts';
import { createMountTable, createSurface } from './surface.ts';

/** What a refusal says unless the adapter says more: a code and a message that name no internals. */
const REFUSALS = {
  400: ['malformed_request', 'The request could not be read.'],
  404: ['not_found', 'No such route.'],
  413: ['payload_too_large', 'The request body is too large.'],
  415: ['unsupported_media_type', 'The request body is in an encoding the service does not read.'],
  500: ['upstream_error', GENERIC_500],
} as const satisfies Record<RefusalStatus, readonly [ErrorCode, string]>;

/** The error of an adapter's refusal (Service.refuse). */
export function refusalError(status: RefusalStatus, message?: string): ApiError {
  const [code, fallback] = REFUSALS[status];
  return new ApiError(code, message ?? fallback);
}

/** HEAD answers carry no body, whatever the status. */
const headless = (request: Request, response: Response) =>
  request.method === 'HEAD' && response.body !== null ? new Response(null, { status: response.status, headers: response.headers }) : response;

export interface Router {
  handle(request: Request): Promise<Response>;
  refuse(status: RefusalStatus, message?: string, request?: Request): Response;
}

export function createRouter(ctx: ServiceContext): Router {
  const v2 = createSurface(v2Surface(), ctx);
  const cloud = createSurface(cloudSurface(), ctx);
  // The cloud surface last: its mount is every path, /api/v2 and /proxy included.
  const surfaces = [v2, createSurface(musicSurface(), ctx), createSurface(videoSurface(), ctx), createSurface(opsSurface(), ctx), cloud];
  const surfaceOf = createMountTable(surfaces, cloud);

  return {
    async handle(request) {
      const path = urlPath(request.url);
      const surface = surfaceOf(path);
      const gate = deploymentRefusal(ctx.deployment, ctx.engine, surface.name, request.method, path);
      const refusal = gate instanceof Promise ? await gate : gate;
      if (refusal !== null) {
        // POST /prompt answers in its own shape (with the reference's `error` and `node_errors`), which clients read.
        const prompt = surface.name === 'cloud' && isPromptPath(path);
        return headless(request, prompt ? promptErrorResponse(refusal, ctx, request) : surface.renderError(refusal, silentLogger, {}));
      }
      return headless(request, await surface.handle(request, path));
    },
    refuse(status, message, request) {
      const surface = request === undefined ? v2 : surfaceOf(urlPath(request.url));
      // An ApiError is answered, never logged: the logger is not reached.
      const response = surface.renderError(refusalError(status, message), silentLogger, {});
      return request === undefined ? response : headless(request, response);
    },
  };
}
