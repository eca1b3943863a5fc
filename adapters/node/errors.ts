// The answers the adapter gives itself, when the service could not be asked
// (an unreadable request, a body over the limit) or failed: the service's
// `refuse` answers them in the shape of the surface that owns the path.
import type { IncomingMessage } from 'node:http';
import type { RefusalStatus, Service } from '../../core/types.ts';
import { requestHref } from './request-head.ts';

/** The status an error thrown while converting a request maps to; anything unknown is a 500. */
export function statusOf(err: unknown): 400 | 413 | 500 {
  const status = (err as { status?: unknown } | null)?.status;
  return status === 400 || status === 413 ? status : 500;
}

/**
 * The service's answer to a request the adapter refuses: `target` is the
 * request target under the mount. A target that makes no URL is answered
 * without one (in the v2 envelope).
 */
export function refusal(
  service: Pick<Service, 'refuse'>,
  status: RefusalStatus,
  req: IncomingMessage,
  opts: { trustProxy?: boolean; target?: string; message?: string } = {},
): Response {
  let request: Request | undefined;
  try {
    request = new Request(requestHref(req, opts.trustProxy, opts.target));
  } catch {
    request = undefined;
  }
  return service.refuse(status, opts.message, request);
}

export { errorFields } from '../../core/log.ts';
