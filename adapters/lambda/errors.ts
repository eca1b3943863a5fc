// What goes wrong around the service: an event that is not a request the
// adapter can read (400). The service's `refuse` answers these and failures
// around it (500, generic message; the detail goes to the log only) in the
// error shape of the request's surface.

/** The event cannot be turned into a Request; the message says why (it names no internals). */
export class MalformedEventError extends Error {
  override name = 'MalformedEventError';
  readonly status = 400;
}

export { errorFields } from '../../core/log.ts';
