// The one guard every outbound request of the service goes through: image
// downloads (LoadImageFromURL), video key frames given by URL, and
// callback_url deliveries. http(s) only; private, loopback and link-local
// hosts refused (see address-rules.ts) on every redirect hop and, where the
// runtime can resolve names (an injected `resolveHost`, e.g. node:dns), for
// every address the name resolves to; size and time bounded while streaming.
// The operator's switch (`allowPrivate`) lifts the host checks only.
//
// LIMITATION: fetch resolves the name again when it connects, so a name
// whose DNS answer changes between the check and the connection (rebinding)
// is not caught; an egress proxy or firewall that blocks internal ranges is
// the complete answer where that matters.
import { readCapped } from '../bytes.ts';
import { forbiddenAddressReason, forbiddenHostReason } from './address-rules.ts';

export type ResolveHost = (hostname: string) => Promise<string[]>;

/** What the operator decided about outbound hosts. */
export interface UrlPolicy {
  /** Private, loopback and link-local hosts may be reached (`--allow-private-urls`). */
  allowPrivate?: boolean;
  /** Addresses of a name; without it only literal addresses and local-only names are refused. */
  resolveHost?: ResolveHost;
}

export interface OutboundRequest extends UrlPolicy {
  /** Whole exchange, redirects and body included. Default 30 s. */
  timeoutMs?: number;
  /** Largest response body read. Default 32 MiB. */
  maxBytes?: number;
  maxRedirects?: number;
  /** The caller's cancel: it surfaces as its own reason, never as an OutboundUrlError. */
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** The transport; default the global fetch (looked up per call). */
  fetch?: typeof globalThis.fetch;
}

export type OutboundFailure = 'invalid' | 'refused' | 'redirects' | 'status' | 'too_large' | 'timeout' | 'network';

export class OutboundUrlError extends Error {
  override name = 'OutboundUrlError';
  constructor(
    message: string,
    readonly kind: OutboundFailure,
    /** The HTTP status, for kind `status`. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export const DEFAULT_MAX_REDIRECTS = 5;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

/** Parses an outbound URL, refusing anything but http(s). */
export function parseOutboundUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new OutboundUrlError(`not a valid URL: ${text}`, 'invalid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundUrlError(`only http and https URLs can be loaded, not ${url.protocol}`, 'invalid');
  }
  return url;
}

/** Refuses a URL the policy does not let the service reach; resolves its name when it can. */
export async function checkOutboundUrl(url: URL, policy: UrlPolicy): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundUrlError(`only http and https URLs can be loaded, not ${url.protocol}`, 'invalid');
  }
  if (policy.allowPrivate === true) return;
  const reason = forbiddenHostReason(url.hostname);
  if (reason) throw new OutboundUrlError(`refusing to fetch ${url.host}: it is ${reason}`, 'refused');
  // A literal address was fully judged above; only names need the resolver.
  if (!policy.resolveHost || url.hostname.startsWith('[') || /^[\d.]+$/.test(url.hostname)) return;
  let addresses: string[];
  try {
    addresses = await policy.resolveHost(url.hostname);
  } catch (err) {
    throw new OutboundUrlError(`could not resolve ${url.hostname}: ${err instanceof Error ? err.message : String(err)}`, 'network');
  }
  for (const address of addresses) {
    const why = forbiddenAddressReason(address);
    if (why) throw new OutboundUrlError(`refusing to fetch ${url.host}: it resolves to ${address}, ${why}`, 'refused');
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One exchange through the guard: every hop checked, redirects followed by
 * hand (a POST only through 307/308, which keep its body; other redirects of
 * a POST are answered as they are), the time limit over all of it, `read`
 * included. Non-guard failures become OutboundUrlError `network`/`timeout`.
 */
async function exchange<T>(
  start: URL,
  init: { method: 'GET' | 'POST'; body?: string },
  req: OutboundRequest,
  read: (res: Response, url: URL, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  const maxRedirects = req.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let url = start;
  try {
    for (let hop = 0; ; hop++) {
      await checkOutboundUrl(url, req);
      signal.throwIfAborted();
      const transport = req.fetch ?? globalThis.fetch;
      const res = await transport(url, { method: init.method, body: init.body, headers: req.headers, redirect: 'manual', signal });
      const follow = REDIRECTS.has(res.status) && (init.method === 'GET' || res.status === 307 || res.status === 308);
      if (follow) {
        await res.body?.cancel().catch(() => {});
        const location = res.headers.get('location');
        if (!location) throw new OutboundUrlError(`HTTP ${res.status} redirect without a Location from ${url.host}`, 'status', res.status);
        if (hop >= maxRedirects) throw new OutboundUrlError(`more than ${maxRedirects} redirects`, 'redirects');
        url = new URL(location, url);
        continue;
      }
      // Browsers hide manual redirects; following one blind would skip the host check.
      if (res.type === 'opaqueredirect') throw new OutboundUrlError('this runtime hides redirects, so they cannot be checked', 'refused');
      return await read(res, url, signal);
    }
  } catch (err) {
    if (req.signal?.aborted) throw req.signal.reason ?? err;
    if (err instanceof OutboundUrlError) throw err;
    if (timeout.aborted) throw new OutboundUrlError(`the request to ${url.host} took longer than ${timeoutMs} ms`, 'timeout');
    const detail = err instanceof Error ? `${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}` : String(err);
    throw new OutboundUrlError(`could not reach ${url.host}: ${detail}`, 'network');
  }
}

/** GETs a URL's bytes through the guard; a non-2xx answer is an OutboundUrlError `status`. */
export async function downloadBytes(url: URL, req: OutboundRequest): Promise<{ bytes: Uint8Array; content_type: string | null; url: URL }> {
  const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
  return exchange(url, { method: 'GET' }, req, async (res, final) => {
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new OutboundUrlError(`HTTP ${res.status} from ${final.host}`, 'status', res.status);
    }
    const tooBig = (n: number): never => {
      throw new OutboundUrlError(`the response from ${final.host} is larger than the ${maxBytes}-byte limit (${n} bytes or more)`, 'too_large');
    };
    const declared = Number(res.headers.get('content-length'));
    if (declared > maxBytes) {
      await res.body?.cancel().catch(() => {});
      tooBig(declared);
    }
    if (!res.body) throw new OutboundUrlError(`empty response from ${final.host}`, 'status', res.status);
    return { bytes: await readCapped(res.body, maxBytes, tooBig), content_type: res.headers.get('content-type'), url: final };
  });
}

/** POSTs a JSON text through the guard; resolves with the final status (the answer's body is dropped). */
export async function postJson(url: URL, json: string, req: OutboundRequest): Promise<{ status: number }> {
  const headers = { 'content-type': 'application/json', ...req.headers };
  return exchange(url, { method: 'POST', body: json }, { ...req, headers }, async (res) => {
    await res.body?.cancel().catch(() => {});
    return { status: res.status };
  });
}
