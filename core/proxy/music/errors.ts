// The music surface's error body `{detail: {code, message}}` and its six
// codes. ApiErrors of the shared layers (auth, credits) are translated here;
// anything unexpected is logged and answered with a generic message.
import { ApiError } from '../../errors.ts';
import { errorText } from '../../log.ts';
import type { Logger } from '../../types.ts';

export const MUSIC_ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  validation_error: 422,
  rate_limited: 429,
  upstream_error: 502,
  // Routing answers beside the endpoint's six: no such path, wrong method.
  not_found: 404,
  method_not_allowed: 405,
  // A deployment's condition (core/deployments/gate.ts), under the contract's codes.
  deployment_not_ready: 429,
  deployment_stopped: 422,
} as const;

export type MusicErrorCode = keyof typeof MUSIC_ERROR_STATUS;

export const GENERIC_UPSTREAM = 'The music generator failed. Try again later.';

export class MusicError extends Error {
  override name = 'MusicError';
  constructor(
    readonly code: MusicErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** What an ApiError of the shared layers is on this surface. */
const FROM_API: Partial<Record<ApiError['code'], MusicErrorCode>> = {
  unauthorized: 'unauthorized',
  forbidden: 'unauthorized',
  insufficient_credits: 'insufficient_credits',
  malformed_request: 'bad_request',
  unsupported_media_type: 'bad_request',
  payload_too_large: 'bad_request',
  invalid_request: 'validation_error',
  rate_limited: 'rate_limited',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  upstream_error: 'upstream_error',
  deployment_not_ready: 'deployment_not_ready',
  deployment_stopped: 'deployment_stopped',
};

export function musicErrorResponse(err: unknown, logger: Logger, context: Record<string, unknown> = {}): Response {
  let known: MusicError;
  if (err instanceof MusicError) known = err;
  else if (err instanceof ApiError && FROM_API[err.code]) known = new MusicError(FROM_API[err.code]!, err.message, err.headers);
  else {
    logger.error('music generation failed', { ...context, error: errorText(err) });
    known = new MusicError('upstream_error', GENERIC_UPSTREAM);
  }
  return Response.json({ detail: { code: known.code, message: known.message } }, { status: MUSIC_ERROR_STATUS[known.code], headers: known.headers });
}
