// Links in responses: where the service is mounted (a prefix the adapter
// passes with each request, or the operator's publicBaseUrl) and the parts of
// a request's URL they are built from, cut out without parsing it again.
import type { ServiceConfig } from '../config.ts';
import { requestOptions } from './request-options.ts';

type LinkConfig = { config: Pick<ServiceConfig, 'publicBase'> };

/**
 * The path the service is mounted under ('' at the root), for host-relative
 * links: the path of `publicBaseUrl` when it is set (it names the public
 * address whole), else the prefix the adapter gave with this request.
 */
export function mountPrefix(ctx: LinkConfig, request: Request): string {
  return ctx.config.publicBase?.path ?? requestOptions(request)?.mountPrefix ?? '';
}

/**
 * Where the path starts in a serialized http(s) URL (`request.url`), or -1
 * for any other: there it follows the host, which holds no '/', and no
 * userinfo (a Request refuses credentials; one with '@' is parsed anyway).
 */
function pathStart(url: string): number {
  const hostStart = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : -1;
  if (hostStart === -1) return -1;
  const slash = url.indexOf('/', hostStart);
  if (slash === -1 || url.lastIndexOf('@', slash) >= hostStart) return -1;
  return slash;
}

/** `new URL(url).pathname`, cut out of a serialized URL without parsing it again. */
export function urlPath(url: string): string {
  const start = pathStart(url);
  if (start === -1) return new URL(url).pathname;
  const query = url.indexOf('?', start);
  const fragment = url.indexOf('#', start);
  const end = query === -1 ? fragment : fragment === -1 ? query : Math.min(query, fragment);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

/** `new URL(url).origin`, likewise (the serializer already left out a default port). */
export function urlOrigin(url: string): string {
  const start = pathStart(url);
  return start === -1 ? new URL(url).origin : url.slice(0, start);
}

/** Origin plus mount prefix: what absolute links in responses start with. */
export function linkBase(ctx: LinkConfig, request: Request): string {
  return ctx.config.publicBase?.base ?? urlOrigin(request.url) + (requestOptions(request)?.mountPrefix ?? '');
}
