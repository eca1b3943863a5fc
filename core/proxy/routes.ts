// The generation endpoints under /proxy: the music and video route sets,
// mounted beside the v2 and cloud surfaces (outside the v2 OpenAPI document).
// Each set answers errors in its own body shape, so handlers catch their own.
import type { ServiceContext } from '../context.ts';
import { musicRoutes } from './music/routes.ts';
import { videoRoutes } from './video/routes.ts';

export type ProxyHandler = (request: Request, ctx: ServiceContext, params: Record<string, string>) => Promise<Response>;
export type ProxyRoute = [method: string, path: string, handler: ProxyHandler];

export const PROXY_ROUTES: ProxyRoute[] = [...musicRoutes, ...videoRoutes];
