// The few responses the adapter writes itself, when the service could not be
// asked (an unreadable request) or failed; same envelope as the core's.
import { envelope, type ErrorCode } from '../../core/errors.ts';

const GENERIC = {
  400: ['malformed_request', 'The request could not be read.'],
  404: ['not_found', 'No such route.'],
  413: ['payload_too_large', 'The request body is too large.'],
  500: ['upstream_error', 'The service could not complete the request. Try again later.'],
} as const satisfies Record<number, readonly [ErrorCode, string]>;

export type AdapterStatus = keyof typeof GENERIC;

/** A JSON error response; the message is generic unless one is given (never an internal detail). */
export function errorResponse(status: AdapterStatus, code?: ErrorCode, message?: string): Response {
  const [defaultCode, defaultMessage] = GENERIC[status];
  return Response.json(envelope(code ?? defaultCode, message ?? defaultMessage), { status });
}

/** The status an error thrown while converting a request maps to; anything unknown is a 500. */
export function statusOf(err: unknown): 400 | 413 | 500 {
  const status = (err as { status?: unknown } | null)?.status;
  return status === 400 || status === 413 ? status : 500;
}

export function errorFields(err: unknown): Record<string, unknown> {
  return { error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}
