// The one place where v2 error codes meet HTTP statuses and the envelope
// `{error: {code, message, details?}}`. Handlers throw ApiError; anything else
// that escapes becomes a 500 `upstream_error` whose detail goes to the log only.
import { EngineNotReadyError } from '../engine/types.ts';
import { respondJson } from './http/json-response.ts';
import { errorText } from './log.ts';
import type { Logger } from './types.ts';

/** Every code the v2 surface can answer with, and its status. */
export const ERROR_STATUS = {
  // Codes of the contract.
  invalid_workflow: 422,
  workflow_format_ui: 422,
  missing_asset: 422,
  hash_mismatch: 409,
  blob_not_found: 404,
  idempotency_key_reuse: 422,
  queue_full: 429,
  insufficient_credits: 402,
  not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  upstream_error: 500,
  deployment_not_ready: 429,
  deployment_stopped: 422,
  asset_in_use: 409,
  rate_limited: 429,
  too_many_streams: 429,
  /** Cloud-compatible surface: the account's subscription is not active. */
  subscription_inactive: 429,
  // Request-shape codes the contract leaves to the implementation.
  invalid_request: 422,
  malformed_request: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  method_not_allowed: 405,
  // Operator codes (/ops/*).
  /** The engine runs jobs in process: it has no pool of engine servers to change. */
  no_server_pool: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** What a 500 says, on every surface: the cause goes to the log only. */
export const GENERIC_500 = 'The service could not complete the request. Try again later.';

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
    this.headers = headers;
  }
}

export function envelope(code: ErrorCode, message: string, details?: Record<string, unknown>) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

export function errorResponse(err: ApiError): Response {
  return respondJson(envelope(err.code, err.message, err.details), {
    status: err.status,
    headers: err.headers,
  });
}

/** Seconds a client waits before it asks a deployment that is not ready again. */
export const NOT_READY_RETRY_AFTER = '5';

/** Errors that are not handlers' own but have a meaning for clients; null for the rest. */
export function knownError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof EngineNotReadyError)
    return new ApiError('deployment_not_ready', err.message, undefined, { 'Retry-After': NOT_READY_RETRY_AFTER });
  return null;
}

/**
 * Turns whatever a handler threw into a response, in a surface's shape
 * (`render`; the v2 envelope by default); unknown errors are logged, not shown.
 */
export function toErrorResponse(
  err: unknown,
  logger: Logger,
  context: Record<string, unknown>,
  render: (err: ApiError) => Response = errorResponse,
): Response {
  const known = knownError(err);
  if (known) return render(known);
  logger.error('unhandled error', {
    ...context,
    error: errorText(err),
  });
  return render(new ApiError('upstream_error', GENERIC_500));
}

export const notFound = (what = 'The resource was not found.') => new ApiError('not_found', what);

export function invalid(message: string, field: string, reason: string, extra: Record<string, unknown> = {}) {
  return new ApiError('invalid_request', message, { field, reason, ...extra });
}
