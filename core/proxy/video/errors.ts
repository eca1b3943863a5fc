// The video surface's error body `{message, details: [...]}`: 400 for a bad
// request (every problem a detail), 401, 402 (credits), 404 (no such task),
// 405 (wrong method), 422 and 429 (the deployment is stopped or not ready), 500 with a generic message whose cause goes to the log
// only. ApiErrors of the shared layers (auth, credits, body reading) are
// translated here.
import { ApiError } from '../../errors.ts';
import { errorText } from '../../log.ts';
import type { Logger } from '../../types.ts';

export const GENERIC_FAILURE = 'The video service could not complete the request. Try again later.';

export class VideoError extends Error {
  override name = 'VideoError';
  constructor(
    readonly status: 400 | 401 | 402 | 403 | 404 | 405 | 422 | 429 | 500,
    message: string,
    readonly details: string[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const FROM_API: Partial<Record<ApiError['code'], VideoError['status']>> = {
  unauthorized: 401,
  forbidden: 403,
  insufficient_credits: 402,
  not_found: 404,
  method_not_allowed: 405,
  malformed_request: 400,
  unsupported_media_type: 400,
  payload_too_large: 400,
  invalid_request: 400,
  upstream_error: 500,
  // A deployment's condition (core/deployments/gate.ts): the contract's statuses, Retry-After kept.
  deployment_not_ready: 429,
  deployment_stopped: 422,
};

export function videoErrorBody(message: string, details: string[] = []) {
  return { message, details };
}

export function videoErrorResponse(err: unknown, logger: Logger, context: Record<string, unknown> = {}): Response {
  let known: VideoError;
  if (err instanceof VideoError) known = err;
  else if (err instanceof ApiError && FROM_API[err.code]) known = new VideoError(FROM_API[err.code]!, err.message, [], err.headers);
  else {
    logger.error('video request failed', { ...context, error: errorText(err) });
    known = new VideoError(500, GENERIC_FAILURE);
  }
  return Response.json(videoErrorBody(known.message, known.details), { status: known.status, headers: known.headers });
}
