// The few parts of Express the adapter uses, declared structurally so its
// types need no @types/express: Express's own request, response and error
// handler types fit these.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Node's request as Express hands it on, with the mount path taken off req.url. */
export interface ExpressRequest extends IncomingMessage {
  /** The mount path Express took off req.url. */
  baseUrl: string;
  originalUrl: string;
  /** req.url's path, under the mount. */
  path: string;
  /** What a body parser in front of the mount left. */
  body?: unknown;
  app?: { get(name: string): unknown };
}

export type ExpressHandler = (req: ExpressRequest, res: ServerResponse) => void;

export type ExpressErrorHandler = (err: unknown, req: ExpressRequest, res: ServerResponse, next: (err?: unknown) => void) => void;
