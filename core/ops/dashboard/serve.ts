// Serves the web dashboard: the page at the surface's root and its style and
// script modules under /dashboard/, all strings of this folder (no build
// step). Every answer carries a Content-Security-Policy that lets the page
// load and call this origin only (plus blob: and data: for output previews),
// and is revalidated on each load, so an upgrade shows at once.

import { sha256Hex } from '../../../lib/sha256.ts';
import { notFound } from '../../errors.ts';
import { mountPrefix } from '../../http/links.ts';
import type { Route } from '../../http/surface.ts';
import { DASHBOARD_FILES } from './files.ts';
import { dashboardPage } from './page.ts';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  // Outputs are previewed from blob: URLs (fetched with the key); live previews arrive as data: URLs.
  "img-src 'self' blob: data:",
  "media-src 'self' blob:",
  "base-uri 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const etags = new Map<string, Promise<string>>();

/** A strong validator of the body, worked out once per distinct body (one per file, one page per prefix). */
function etagOf(body: string): Promise<string> {
  let etag = etags.get(body);
  if (etag === undefined) {
    // Pages differ only by prefix: a handful at most, unless something keeps inventing prefixes.
    if (etags.size > 64) etags.clear();
    etags.set(body, (etag = sha256Hex(body).then((hex) => `"${hex.slice(0, 32)}"`)));
  }
  return etag;
}

async function respond(request: Request, body: string, contentType: string): Promise<Response> {
  const etag = await etagOf(body);
  const headers = {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache',
    ETag: etag,
    'Content-Security-Policy': DASHBOARD_CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
  const presented = request.headers.get('if-none-match');
  if (presented?.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { headers });
}

const page: Route[2] = (request, ctx) => respond(request, dashboardPage(mountPrefix(ctx, request)), 'text/html; charset=utf-8');

const file: Route[2] = async (request, _ctx, params) => {
  const found = DASHBOARD_FILES.get(params.file);
  if (found === undefined) throw notFound('No such dashboard file.');
  return respond(request, found.body, found.type);
};

/** GET (and HEAD) of the page at / and of its files at /dashboard/{file}. */
export function dashboardRoutes(): Route[] {
  return [
    ['GET', '/', page],
    ['HEAD', '/', page],
    ['GET', '/dashboard/:file', file],
    ['HEAD', '/dashboard/:file', file],
  ];
}
