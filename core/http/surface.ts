// A surface of the service (v2, cloud-compatible, music, video): the paths it
// owns, its routes, and the renderer of its error shape. Each surface answers
// everything under its paths itself, routing answers too (404, 405, a path
// parameter that is not percent-encoding), so a client of the music endpoint
// reads `{detail}` and one of v2 the envelope, whatever went wrong.
//
// Patterns are itty-router's (compiled by it: `:name` parameters, `*`
// wildcards), and so are the route tables; requests are matched by the one
// loop below, at both levels (which surface, then which route). itty's own
// fetch would parse every URL again per level, build the query as an object
// and set properties on the Request; bench/router.ts gives the figures.
import { Router, type RouterType } from 'itty-router';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import type { Logger } from '../types.ts';

export type Handler = (request: Request, ctx: ServiceContext, params: Record<string, string>) => Promise<Response>;
export type Route = [method: string, path: string, handler: Handler];

/** Whatever a handler threw, as this surface's error answer; unknown errors are logged, never shown. */
export type ErrorRenderer = (err: unknown, logger: Logger, context: Record<string, unknown>) => Response;

export interface SurfaceDefinition {
  name: 'v2' | 'cloud' | 'music' | 'video' | 'ops';
  /** The paths the surface answers for (its routes and its 404s), in itty's pattern language. */
  mounts: string[];
  routes: Route[];
  renderError: ErrorRenderer;
  /**
   * How a path that matches no route is answered (404, or 405 with the
   * methods it has), when not with renderError's not_found and
   * method_not_allowed: the cloud surface answers as the reference's server does.
   */
  renderUnrouted?: (status: 404 | 405, allowed: string[]) => Response;
}

export interface Surface {
  readonly name: SurfaceDefinition['name'];
  readonly mounts: readonly string[];
  readonly renderError: ErrorRenderer;
  /** Answers a request whose path (under the mount) this surface owns; never rejects. */
  handle(request: Request, path: string): Promise<Response>;
}

type Compiled<T> = Array<[method: string, regex: RegExp, handlers: T[], path: string]>;

/** itty-router's compiled table: [METHOD, RegExp, handlers, pattern] per route. */
function compile<T>(register: (router: RouterType) => void): Compiled<T> {
  const router = Router();
  register(router);
  return router.routes as unknown as Compiled<T>;
}

/** The first entry whose method and pattern match, with its named groups. */
function match<T>(table: Compiled<T>, method: string, path: string): [T, Record<string, string> | undefined] | null {
  for (const [m, regex, handlers] of table) {
    if (m !== method && m !== 'ALL') continue;
    const found = regex.exec(path);
    if (found !== null) return [handlers[0], found.groups];
  }
  return null;
}

function decodeParams(raw: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in raw) {
    const value = raw[k];
    try {
      // Without a '%' there is nothing to decode (and nothing that can fail to).
      out[k] = value.includes('%') ? decodeURIComponent(value) : value;
    } catch {
      throw new ApiError('malformed_request', `The path parameter "${k}" is not valid percent-encoding.`);
    }
  }
  return out;
}

export function createSurface(definition: SurfaceDefinition, ctx: ServiceContext): Surface {
  const table = compile<Handler>((router) => {
    for (const [method, path, handler] of definition.routes) router[method.toLowerCase() as 'get'](path, handler);
  });
  const { renderError, renderUnrouted } = definition;

  /** No route matched: 405 naming the methods the path has, else 404. */
  function unrouted(path: string): Response | ApiError {
    const allowed = [...new Set(table.filter(([, regex]) => regex.test(path)).map(([method]) => method))];
    if (renderUnrouted) return renderUnrouted(allowed.length === 0 ? 404 : 405, allowed);
    if (allowed.length === 0) return new ApiError('not_found', 'No such route.');
    return new ApiError('method_not_allowed', `Use ${allowed.join(', ')} on this path.`, undefined, { Allow: allowed.join(', ') });
  }

  return {
    name: definition.name,
    mounts: definition.mounts,
    renderError,
    async handle(request, path) {
      try {
        const found = match(table, request.method, path);
        if (found === null) {
          const answer = unrouted(path);
          if (answer instanceof Response) return answer;
          throw answer;
        }
        return await found[0](request, ctx, decodeParams(found[1]));
      } catch (err) {
        return renderError(err, ctx.logger, { method: request.method, url: request.url });
      }
    },
  };
}

/**
 * Which surface owns a path: the mounts of every surface, in the order given
 * (the first match wins); a path nobody mounts is `fallback`'s.
 */
export function createMountTable(surfaces: Surface[], fallback: Surface): (path: string) => Surface {
  const table = compile<Surface>((router) => {
    for (const surface of surfaces) for (const mount of surface.mounts) router.all(mount, surface as never);
  });
  return (path) => match(table, 'ALL', path)?.[0] ?? fallback;
}
