// The music surface's routes: POST /proxy/musicgen/t2m/generate.
import type { ProxyRoute } from '../routes.ts';
import { generateMusic } from './generate.ts';

export const musicRoutes: ProxyRoute[] = [['POST', '/proxy/musicgen/t2m/generate', (r, c) => generateMusic(r, c)]];
