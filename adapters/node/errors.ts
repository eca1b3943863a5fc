// The few responses the adapter writes itself, when the service could not be
// asked (an unreadable request) or failed; in the shape of the path's surface.
import { adapterErrorResponse } from '../../core/surface-errors.ts';

/** A JSON error response in the shape of the surface `path` is under; the message is generic unless one is given. */
export const errorResponse = adapterErrorResponse;

/** The status an error thrown while converting a request maps to; anything unknown is a 500. */
export function statusOf(err: unknown): 400 | 413 | 500 {
  const status = (err as { status?: unknown } | null)?.status;
  return status === 400 || status === 413 ? status : 500;
}

export { errorFields } from '../../core/log.ts';
