// The music surface's routes: POST /proxy/musicgen/t2m/generate.
import type { ProxyRoute } from '../routes.ts';

export const musicRoutes: ProxyRoute[] = [];
