// The service as Express middleware, mountable at any path:
// `app.use('/graph', graphrun(service))`. Express has already taken the
// mount path off req.url and kept it in req.baseUrl: the request goes on to
// the Node adapter's conversion with that prefix, so links carry it. Every
// request under the path is answered here (unknown routes with the service's
// 404), never passed on with next(). Beside the middleware comes an error
// handler for the bodies a parser in front of the mount refused
// (parser-refusals.ts); app.use takes the pair as it takes one middleware.

import { consoleLogger } from '../../core/log.ts';
import type { Logger, Service } from '../../core/types.ts';
import { refusal } from '../node/errors.ts';
import type { NodeRequestOptions } from '../node/request.ts';
import { writeResponse } from '../node/response.ts';
import { handleNodeRequest } from '../node/server.ts';
import type { ExpressErrorHandler, ExpressHandler, ExpressRequest } from './express-types.ts';
import { bodyWasRead, parsedBodyBytes } from './parsed-body.ts';
import { parserRefusals } from './parser-refusals.ts';

export interface ExpressOptions extends NodeRequestOptions {
  logger?: Logger;
}

type TrustFn = (address: string | undefined, hop: number) => boolean;

/** Express's own 'trust proxy' setting, asked as req.protocol asks it. */
function expressTrustsProxy(req: ExpressRequest): boolean {
  const trust = req.app?.get('trust proxy fn');
  return typeof trust === 'function' && (trust as TrustFn)(req.socket.remoteAddress, 0) === true;
}

/** The service's middleware and the error handler for a parser's refusals, to mount together: `app.use('/graph', graphrun(service))`. */
export type GraphrunMiddleware = [ExpressHandler, ExpressErrorHandler];

export function graphrun(service: Service, opts: ExpressOptions = {}): GraphrunMiddleware {
  const options = { ...opts, logger: opts.logger ?? consoleLogger };
  const trusting = { ...options, trustProxy: true };
  const serve: ExpressHandler = (req, res) => {
    // Without an explicit choice, links follow X-Forwarded-* exactly when Express itself would.
    const conversion = opts.trustProxy !== undefined ? options : expressTrustsProxy(req) ? trusting : options;
    let body: Uint8Array | undefined;
    if (bodyWasRead(req)) {
      body = parsedBodyBytes(req.body, req.headers['content-type']);
      if (body === undefined) {
        options.logger.error('express adapter: the request body was read before graphrun by a middleware that kept nothing in req.body', {
          method: req.method,
          url: req.originalUrl,
        });
        return void writeResponse(res, refusal(service, 500, req, { trustProxy: conversion.trustProxy, target: req.url }), req).catch(() =>
          res.destroy(),
        );
      }
    }
    void handleNodeRequest(service, req, res, conversion, { target: req.url, mountPrefix: req.baseUrl, body });
  };
  return [serve, parserRefusals(service, options)];
}
