// A body parser the app runs before graphrun (`app.use(express.json())`)
// refuses some bodies itself: too large for its limit (100 KB by default),
// unparseable, in an encoding or charset it does not read. It hands Express
// an error, Express then skips every plain middleware, graphrun's included,
// and would answer with its own HTML page. This error handler is mounted
// beside graphrun, so Express reaches it only for requests under the mount;
// it has the service answer those refusals (in the error shape of the
// path's surface), as graphrun answers its own. Any other error goes on to
// the app's handlers.

import type { RefusalStatus, Service } from '../../core/types.ts';
import { refusal as serviceRefusal } from '../node/errors.ts';
import { writeResponse } from '../node/response.ts';
import type { ExpressErrorHandler } from './express-types.ts';

/** What body-parser (through http-errors) puts on the errors it passes on. */
interface ParserRefusal {
  type: string;
  status: number;
  expose?: boolean;
  message: string;
  limit?: number;
}

/** A client error of a body parser: a string `type` and a 4xx status; anything else is not ours to answer. */
function parserRefusal(err: unknown): ParserRefusal | undefined {
  const e = err as Partial<ParserRefusal> | null;
  const clientError = typeof e?.status === 'number' && e.status >= 400 && e.status < 500;
  return typeof e?.type === 'string' && clientError ? (e as ParserRefusal) : undefined;
}

/** The status graphrun answers with: the parser's 413 and 415 as they are, any other refusal a 400. */
const statusFor = (refusal: ParserRefusal): RefusalStatus => (refusal.status === 413 || refusal.status === 415 ? refusal.status : 400);

function messageFor(refusal: ParserRefusal): string | undefined {
  if (refusal.type === 'entity.too.large' && typeof refusal.limit === 'number') {
    return `The request body is larger than ${refusal.limit} bytes, the limit of the app's body parser.`;
  }
  // http-errors marks a 4xx message as safe to show (e.g. the JSON syntax error); else the generic one.
  return refusal.expose ? `The request body was refused: ${refusal.message}.` : undefined;
}

export function parserRefusals(service: Pick<Service, 'refuse'>, opts: { trustProxy?: boolean } = {}): ExpressErrorHandler {
  return (err, req, res, next) => {
    const refusal = parserRefusal(err);
    if (refusal === undefined || res.headersSent) return next(err);
    // req.url is the target under the mount.
    const response = serviceRefusal(service, statusFor(refusal), req, { trustProxy: opts.trustProxy, target: req.url, message: messageFor(refusal) });
    void writeResponse(res, response, req).catch(() => res.destroy());
  };
}
