// How the cloud-compatible surface answers errors: its own body `{code,
// message}` (the cloud contract's ErrorResponse), request-shape problems as
// 400 as that surface documents.
import { type ApiError, type ErrorCode, toErrorResponse } from '../errors.ts';
import { respondJson } from '../http/json-response.ts';
import type { Logger } from '../types.ts';

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
  return respondJson(body, { status: cloudStatus(err), headers: err.headers });
}

/** Whatever was thrown, in the cloud shape; unknown errors are logged, never shown. */
export const cloudErrorResponse = (err: unknown, logger: Logger, context: Record<string, unknown>): Response =>
  toErrorResponse(err, logger, context, cloudError);
