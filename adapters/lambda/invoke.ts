// The part both handlers share: event -> Request -> service.fetch -> Response,
// where an unreadable event is a 400 and a failing service a 500, never a throw.
import type { FetchOptions, Logger } from '../../core/types.ts';
import { deferredJsonResponse, deferredJsonTextResponse } from '../node/known-body.ts';
import type { DeadlineOptions } from './deadline.ts';
import { detectEvent } from './detect.ts';
import { errorFields, MalformedEventError } from './errors.ts';
import { type EventRequest, eventToRequest } from './request.ts';
import type { EventKind, FetchService } from './types.ts';

/** Options both handlers take. */
export interface LambdaOptions extends DeadlineOptions {
  logger?: Logger;
  /** See EventRequestOptions.basePath: e.g. '/prod' for an HTTP API stage other than $default. */
  basePath?: string;
}

export interface Invocation {
  kind: EventKind | null;
  /** The request was HEAD: the answer carries headers only. */
  head: boolean;
  response: Response;
}

export async function invoke(
  service: FetchService,
  event: unknown,
  signal: AbortSignal,
  logger: Logger,
  basePath?: string,
  /** What the handler says of how it answers (the buffered one: `buffered`). */
  answer: Pick<FetchOptions, 'buffered'> = {},
): Promise<Invocation> {
  const kind = detectEvent(event);
  if (kind === null) {
    const message = 'The event is not an HTTP request from API Gateway, a Lambda function URL or an Application Load Balancer.';
    return { kind, head: false, response: service.refuse(400, message) };
  }
  let converted: EventRequest;
  try {
    converted = eventToRequest(event, kind, { signal, basePath });
  } catch (err) {
    if (err instanceof MalformedEventError) return { kind, head: false, response: service.refuse(400, err.message) };
    logger.error('lambda adapter: event could not be read', errorFields(err));
    return { kind, head: false, response: service.refuse(400) };
  }
  const { request, mountPrefix } = converted;
  const head = request.method === 'HEAD';
  try {
    // The handlers write a JSON body the core holds as text without a Web stream (deferredJsonResponse).
    return {
      kind,
      head,
      response: await service.fetch(request, {
        mountPrefix,
        jsonResponse: deferredJsonResponse,
        jsonTextResponse: deferredJsonTextResponse,
        ...answer,
      }),
    };
  } catch (err) {
    logger.error('lambda adapter: request failed', { method: request.method, url: request.url, ...errorFields(err) });
    return { kind, head, response: service.refuse(500, undefined, request) };
  }
}
