// The URL and headers of a Web Request, read from a Node IncomingMessage.
// Shared by plain requests and WebSocket upgrades.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** The request cannot be expressed as a Web Request (bad Host, bad target, forbidden method). */
export class BadRequestError extends Error {
  override name = 'BadRequestError';
  readonly status = 400;
}

// A bare host or IP literal with an optional port: anything else (userinfo,
// slashes) would let a client steer the origin the service builds links from.
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function firstValue(value: string | string[] | undefined): string | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  // Proxies append: the left-most value is the one the client used.
  return raw?.split(',')[0]?.trim() || undefined;
}

function protocol(req: IncomingMessage, trustProxy: boolean): 'http' | 'https' {
  const forwarded = trustProxy ? firstValue(req.headers['x-forwarded-proto'])?.toLowerCase() : undefined;
  if (forwarded === 'https' || forwarded === 'wss') return 'https';
  if (forwarded === 'http' || forwarded === 'ws') return 'http';
  return (req.socket as TLSSocket).encrypted ? 'https' : 'http';
}

/**
 * The request's URL as a string, not parsed yet (the Request constructor
 * parses it; a target it cannot parse is a 400 there). Absolute-form targets
 * (sent to proxies) carry their own origin. `target` replaces req.url, e.g.
 * with a mount prefix taken off.
 */
export function requestHref(req: IncomingMessage, trustProxy = false, target = req.url ?? '/'): string {
  if (!target.startsWith('/')) return target;
  const host = (trustProxy ? firstValue(req.headers['x-forwarded-host']) : undefined) ?? req.headers.host ?? 'localhost';
  if (!HOST.test(host)) throw new BadRequestError('The Host header is not valid.');
  return `${protocol(req, trustProxy)}://${host}${target}`;
}

export function requestUrl(req: IncomingMessage, trustProxy = false, target?: string): URL {
  const href = requestHref(req, trustProxy, target);
  try {
    return new URL(href);
  } catch {
    throw new BadRequestError('The request target is not a valid URL.');
  }
}

/**
 * Adds the request's headers to `headers` (a new Headers, or a Request's own:
 * filling that one directly spares building a Headers only to be copied).
 */
export function appendRequestHeaders(headers: Headers, req: Pick<IncomingMessage, 'headers'>): void {
  const all = req.headers;
  try {
    // req.headers rather than rawHeaders: Node already joined duplicates the
    // way each header needs (cookies with '; ', the rest with ', ').
    for (const name in all) {
      const value = all[name];
      if (value === undefined || name.startsWith(':')) continue;
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.set(name, value);
    }
  } catch {
    throw new BadRequestError('A request header is not valid.');
  }
}

export function requestHeaders(req: Pick<IncomingMessage, 'headers'>): Headers {
  const headers = new Headers();
  appendRequestHeaders(headers, req);
  return headers;
}
