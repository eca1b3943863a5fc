// The path prefix that addresses a deployment (`/deployment/{id}/...`). The
// gateway looks at it before any route, so a prefix such as /api would take
// every /api/... request away from the fallback deployment: one whose first
// segment starts a route of the service is refused.
import { cloudSurface } from '../cloud/surface.ts';
import { opsSurface } from '../ops/surface.ts';
import { musicSurface } from '../proxy/music/surface.ts';
import { videoSurface } from '../proxy/video/surface.ts';
import { v2Surface } from '../v2/surface.ts';

/** The first path segments the service's own routes start with (api, ops, prompt, view, ...): a prefix there would hide them. */
function ownFirstSegments(): Set<string> {
  const segments = new Set<string>();
  for (const surface of [v2Surface(), cloudSurface(), musicSurface(), videoSurface(), opsSurface()]) {
    for (const [, path] of surface.routes) segments.add(path.split('/')[1]);
    for (const mount of surface.mounts) segments.add(mount.split('/')[1]);
  }
  segments.delete('*');
  // The WebSocket is no route of a surface: its upgrade is answered by the hooks.
  segments.add('ws');
  return segments;
}

/** The gateway's path prefix, checked: null when deployments are addressed by host only. */
export function checkPathPrefix(raw: string | false | undefined): string | null {
  if (raw === false) return null;
  const prefix = (raw ?? '/deployment').replace(/\/+$/, '');
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(prefix))
    throw new TypeError(`pathPrefix must be false or a path such as /deployment, got ${JSON.stringify(raw)}`);
  const first = prefix.split('/')[1];
  if (ownFirstSegments().has(first))
    throw new TypeError(`pathPrefix ${prefix} would hide the service's own /${first} routes: choose another, such as /deployment`);
  return prefix;
}
