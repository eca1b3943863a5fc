// The buffered handler: API Gateway (HTTP API, REST API), Lambda function
// URLs in BUFFERED mode, and ALB target groups. One event in, one result out.
import { consoleLogger } from '../../core/log.ts';
import { ResultTooLargeError } from './body.ts';
import { deadlineSignal } from './deadline.ts';
import { errorFields } from './errors.ts';
import { invoke, type LambdaOptions } from './invoke.ts';
import { responseToResult } from './result.ts';
import type { EventKind, FetchService, LambdaContextLike, LambdaResult } from './types.ts';

/** Lambda's synchronous response limit is 6 MB of JSON; headers and quoting need some of it. */
export const DEFAULT_MAX_RESULT_BODY_BYTES = 6 * 1024 * 1024 - 64 * 1024;

export interface LambdaHandlerOptions extends LambdaOptions {
  /** Largest encoded result body (base64 counts as sent). Default 6 MB less 64 KiB. */
  maxResultBodyBytes?: number;
}

export type LambdaHandler = (event: unknown, context?: LambdaContextLike) => Promise<LambdaResult>;

export function createLambdaHandler(service: FetchService, opts: LambdaHandlerOptions = {}): LambdaHandler {
  const logger = opts.logger ?? consoleLogger;
  const maxBodyBytes = opts.maxResultBodyBytes ?? DEFAULT_MAX_RESULT_BODY_BYTES;
  return async (event, context) => {
    const deadline = deadlineSignal(context, opts);
    let kind: EventKind | null = null;
    try {
      // `buffered`: what must stream (music generation) is refused up front, before anything is charged.
      const answer = await invoke(service, event, deadline.signal, logger, opts.basePath, { buffered: true });
      kind = answer.kind;
      // A live stream (SSE) is read until it ends or the deadline closes it.
      return await responseToResult(answer.response, kind, { maxBodyBytes, head: answer.head, logger });
    } catch (err) {
      const tooLarge = err instanceof ResultTooLargeError;
      if (!tooLarge) logger.error('lambda adapter: response could not be returned', errorFields(err));
      const message = tooLarge ? 'The response is too large for a buffered Lambda result; use the streaming handler.' : undefined;
      return await responseToResult(service.refuse(500, message), kind, { maxBodyBytes, logger });
    } finally {
      deadline.clear();
    }
  };
}
