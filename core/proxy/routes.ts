// The generation endpoints under /proxy: the music and video route sets,
// mounted beside the v2 and cloud surfaces (outside the v2 OpenAPI document).
// Each set answers errors in its own body shape, so handlers catch their own.
import type { ServiceContext } from '../context.ts';
import { musicRoutes } from './music/routes.ts';

export type ProxyHandler = (request: Request, ctx: ServiceContext, params: Record<string, string>) => Promise<Response>;
export type ProxyRoute = [method: string, path: string, handler: ProxyHandler];

// Video routes: once core/proxy/video/routes.ts exists, import `videoRoutes`
// from './video/routes.ts' and spread it into this list.
const VIDEO: ProxyRoute[] = [];

export const PROXY_ROUTES: ProxyRoute[] = [...musicRoutes, ...VIDEO];
