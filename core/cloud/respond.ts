// How the cloud-compatible surface answers: its own error body `{code,
// message}` (the cloud contract's ErrorResponse), request-shape problems as
// 400 as that surface documents, and every route served both under `/api`
// and bare, as the reference engine serves them.
import type { ServiceContext } from '../context.ts';
import { toErrorResponse, type ApiError, type ErrorCode } from '../errors.ts';
import type { Logger } from '../types.ts';

export type CloudHandler = (request: Request, ctx: ServiceContext, params: Record<string, string>) => Promise<Response>;
export type CloudRoute = [method: string, path: string, handler: CloudHandler];

/** The cloud surface says 400 for a bad request, where v2 says 422. */
const STATUS: Partial<Record<ErrorCode, number>> = {
  invalid_request: 400,
  invalid_workflow: 400,
  workflow_format_ui: 400,
  missing_asset: 400,
  idempotency_key_reuse: 400,
};

/** The status this surface answers an ApiError with. */
export const cloudStatus = (err: ApiError): number => STATUS[err.code] ?? err.status;

export function cloudError(err: ApiError): Response {
  const body: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.details !== undefined) body.details = err.details;
  return Response.json(body, { status: cloudStatus(err), headers: err.headers });
}

/** Whatever was thrown, in the cloud shape; unknown errors are logged, never shown. */
export const cloudErrorResponse = (err: unknown, logger: Logger, context: Record<string, unknown>): Response =>
  toErrorResponse(err, logger, context, cloudError);

/** Wraps a handler so whatever it throws leaves in the cloud shape. */
export function cloudHandler(handler: CloudHandler): CloudHandler {
  return async (request, ctx, params) => {
    try {
      return await handler(request, ctx, params);
    } catch (err) {
      return cloudErrorResponse(err, ctx.logger, { method: request.method, url: request.url });
    }
  };
}

/** Each route under `/api` and bare, with cloud error handling. */
export function cloudRoutes(routes: CloudRoute[]): CloudRoute[] {
  return routes.flatMap(([method, path, handler]) => {
    const wrapped = cloudHandler(handler);
    return [
      [method, `/api${path}`, wrapped],
      [method, path, wrapped],
    ] satisfies CloudRoute[];
  });
}
