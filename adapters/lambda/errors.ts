// The few answers the adapter gives itself, in the error shape of the
// request's surface: an event that is not a request it can read (400) and a
// failure around the service (500, generic message; the detail goes to the
// log only).
import { adapterErrorResponse } from '../../core/surface-errors.ts';

/** The event cannot be turned into a Request; the message says why (it names no internals). */
export class MalformedEventError extends Error {
  override name = 'MalformedEventError';
  readonly status = 400;
}

/** An answer of the adapter's own, in the shape of the surface `path` is under ('' when the event has none). */
export const errorResponse = (status: 400 | 500, message?: string, path = ''): Response => adapterErrorResponse(status, path, message);

export { errorFields } from '../../core/log.ts';
