// The buffered handler: API Gateway (HTTP API, REST API), Lambda function
// URLs in BUFFERED mode, and ALB target groups. One event in, one result out.
import { urlPath } from '../../core/context.ts';
import { consoleLogger } from '../../core/log.ts';
import { MusicError, musicErrorResponse } from '../../core/proxy/music/errors.ts';
import { surfaceOf } from '../../core/surface-errors.ts';
import { deadlineSignal } from './deadline.ts';
import { errorFields, errorResponse } from './errors.ts';
import { ResultTooLargeError } from './body.ts';
import { invoke, type LambdaOptions } from './invoke.ts';
import { responseToResult } from './result.ts';
import type { Logger } from '../../core/types.ts';
import type { EventKind, FetchService, LambdaContextLike, LambdaResult } from './types.ts';

/** Lambda's synchronous response limit is 6 MB of JSON; headers and quoting need some of it. */
export const DEFAULT_MAX_RESULT_BODY_BYTES = 6 * 1024 * 1024 - 64 * 1024;

export interface LambdaHandlerOptions extends LambdaOptions {
  /** Largest encoded result body (base64 counts as sent). Default 6 MB less 64 KiB. */
  maxResultBodyBytes?: number;
}

export type LambdaHandler = (event: unknown, context?: LambdaContextLike) => Promise<LambdaResult>;

const STREAM_ONLY =
  'Music generation streams its audio and needs the streaming Lambda handler (createLambdaStreamHandler, exported as streamHandler); ' +
  'this buffered handler cannot return it. Nothing was charged.';

/**
 * Music generation charges its credits before the first byte, and a minute of
 * audio is more than a buffered result can carry: answered here, before the
 * service runs, so no account pays for audio it would never receive.
 */
function refuseMusic(service: FetchService, logger: Logger): FetchService {
  return {
    fetch(request, options) {
      if (request.method === 'POST' && surfaceOf(urlPath(request.url)) === 'music') {
        return Promise.resolve(musicErrorResponse(new MusicError('bad_request', STREAM_ONLY), logger));
      }
      return service.fetch(request, options);
    },
  };
}

export function createLambdaHandler(service: FetchService, opts: LambdaHandlerOptions = {}): LambdaHandler {
  const logger = opts.logger ?? consoleLogger;
  const maxBodyBytes = opts.maxResultBodyBytes ?? DEFAULT_MAX_RESULT_BODY_BYTES;
  const buffered = refuseMusic(service, logger);
  return async (event, context) => {
    const deadline = deadlineSignal(context, opts);
    let kind: EventKind | null = null;
    try {
      const answer = await invoke(buffered, event, deadline.signal, logger, opts.basePath);
      kind = answer.kind;
      // A live stream (SSE) is read until it ends or the deadline closes it.
      return await responseToResult(answer.response, kind, { maxBodyBytes, head: answer.head, logger });
    } catch (err) {
      const tooLarge = err instanceof ResultTooLargeError;
      if (!tooLarge) logger.error('lambda adapter: response could not be returned', errorFields(err));
      const message = tooLarge ? 'The response is too large for a buffered Lambda result; use the streaming handler.' : undefined;
      return await responseToResult(errorResponse(500, message), kind, { maxBodyBytes, logger });
    } finally {
      deadline.clear();
    }
  };
}
