// The URL an operator gives for an engine server, checked before it is stored
// or joins the pool: an http(s) base URL the engine can append its paths to
// (so no query or fragment), without credentials (the list shows URLs to
// every operator), named as the engine names it (normalizeServerUrl).
import { normalizeServerUrl } from '../../../storage/types.ts';
import { ApiError } from '../../errors.ts';

const refuse = (reason: string) =>
  new ApiError('malformed_request', `"url" must be the http(s) base URL of an engine server: ${reason}.`, { field: 'url', reason });

export function serverUrlOf(body: unknown): string {
  const raw = (body as { url?: unknown } | null)?.url;
  if (typeof raw !== 'string' || raw.trim() === '') throw refuse('missing');
  let parsed: URL;
  try {
    parsed = new URL(raw.trim());
  } catch {
    throw refuse('not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw refuse('not http or https');
  if (parsed.username || parsed.password) throw refuse('credentials are not allowed in it');
  if (parsed.search || parsed.hash || raw.includes('?') || raw.includes('#')) throw refuse('a query or fragment is not allowed in it');
  return normalizeServerUrl(raw);
}
