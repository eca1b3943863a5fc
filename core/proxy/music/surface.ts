// The music surface (/proxy/musicgen): text-to-music generation streamed as
// NDJSON, every error in its `{detail: {code, message}}` body.
import type { SurfaceDefinition } from '../../http/surface.ts';
import { musicErrorResponse } from './errors.ts';
import { generateMusic } from './generate.ts';

export function musicSurface(): SurfaceDefinition {
  return {
    name: 'music',
    mounts: ['/proxy/musicgen/*'],
    routes: [['POST', '/proxy/musicgen/t2m/generate', (r, c) => generateMusic(r, c)]],
    renderError: musicErrorResponse,
  };
}
