// The few answers the adapter gives itself, in the service's v2 envelope:
// an event that is not a request it can read (400) and a failure around the
// service (500, generic message; the detail goes to the log only).
import { envelope, type ErrorCode } from '../../core/errors.ts';

/** The event cannot be turned into a Request; the message says why (it names no internals). */
export class MalformedEventError extends Error {
  override name = 'MalformedEventError';
  readonly status = 400;
}

const GENERIC = {
  400: ['malformed_request', 'The request could not be read.'],
  500: ['upstream_error', 'The service could not complete the request. Try again later.'],
} as const satisfies Record<number, readonly [ErrorCode, string]>;

export function errorResponse(status: keyof typeof GENERIC, message?: string): Response {
  const [code, fallback] = GENERIC[status];
  return Response.json(envelope(code, message ?? fallback), { status });
}

export function errorFields(err: unknown): Record<string, unknown> {
  return { error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}
