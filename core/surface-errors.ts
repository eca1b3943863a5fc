// Which of the three surfaces a path belongs to decides the shape of an error
// answered outside that surface's own handlers: routing (404, 405), path
// decoding, an adapter's refusals. A client of /proxy/musicgen reads
// `{detail}`, one of /proxy/videogen `{message, details}`, one of the
// cloud-compatible /api `{code, message}`, and v2 the envelope.
import { CLOUD_FILES_ROUTES } from './cloud/files-routes.ts';
import { CLOUD_JOBS_ROUTES } from './cloud/jobs-routes.ts';
import { cloudErrorResponse } from './cloud/respond.ts';
import { ApiError, GENERIC_500, toErrorResponse, type ErrorCode } from './errors.ts';
import { musicErrorResponse } from './proxy/music/errors.ts';
import { videoErrorResponse } from './proxy/video/errors.ts';
import { silentLogger } from './log.ts';
import type { Logger } from './types.ts';

export type Surface = 'v2' | 'cloud' | 'music' | 'video';

const under = (path: string, root: string) => path === root || path.startsWith(`${root}/`);

/** First segments of the cloud routes served bare, as the reference engine serves them (`/prompt`, `/view`, ...). */
const BARE_CLOUD = new Set([...CLOUD_FILES_ROUTES, ...CLOUD_JOBS_ROUTES].map(([, path]) => path.split('/')[1]));

/** The surface a path (under the mount) belongs to by its prefix; anything unknown is v2's. */
export function surfaceOf(path: string): Surface {
  if (under(path, '/proxy/musicgen')) return 'music';
  if (under(path, '/proxy/videogen')) return 'video';
  if (under(path, '/api/v2')) return 'v2';
  if (under(path, '/api') || BARE_CLOUD.has(path.split('/', 2)[1])) return 'cloud';
  return 'v2';
}

/** Whatever was thrown, answered in the surface's shape; unknown errors are logged, never shown. */
export function surfaceErrorResponse(surface: Surface, err: unknown, logger: Logger, context: Record<string, unknown>): Response {
  switch (surface) {
    case 'music':
      return musicErrorResponse(err, logger, context);
    case 'video':
      return videoErrorResponse(err, logger, context);
    case 'cloud':
      return cloudErrorResponse(err, logger, context);
    default:
      return toErrorResponse(err, logger, context);
  }
}

/** What an adapter says when the service could not be asked or failed: a code and a message that names no internals. */
const ADAPTER_ERRORS = {
  400: ['malformed_request', 'The request could not be read.'],
  404: ['not_found', 'No such route.'],
  413: ['payload_too_large', 'The request body is too large.'],
  415: ['unsupported_media_type', 'The request body is in an encoding the service does not read.'],
  500: ['upstream_error', GENERIC_500],
} as const satisfies Record<number, readonly [ErrorCode, string]>;

export type AdapterStatus = keyof typeof ADAPTER_ERRORS;

/**
 * An adapter's own answer (an unreadable request or event, a body over its
 * limit, a failure around the service) in the shape of the surface `path`
 * (the path under the mount, '' when there is none) belongs to.
 */
export function adapterErrorResponse(status: AdapterStatus, path = '', message?: string): Response {
  const [code, fallback] = ADAPTER_ERRORS[status];
  const err = new ApiError(code, message ?? fallback);
  // An ApiError is answered, never logged: the logger is not reached.
  return surfaceErrorResponse(surfaceOf(path), err, silentLogger, {});
}
