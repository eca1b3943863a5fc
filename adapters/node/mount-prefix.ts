// A service mounted under a path of a server that serves other things too:
// which request targets are under the prefix, and what is left of them.
export { normalizeMountPrefix } from '../../core/http/request-options.ts';

/**
 * The target with `prefix` taken off ('/graph/api/x?q' -> '/api/x?q',
 * '/graph' -> '/'), or undefined when the target is not under it
 * ('/graphite', '/other'). Matched as sent, case and percent-encoding included.
 * Absolute-form targets (sent to proxies) are not under any prefix.
 */
export function underPrefix(target: string, prefix: string): string | undefined {
  if (!target.startsWith(prefix)) return undefined;
  const rest = target.slice(prefix.length);
  if (rest === '') return '/';
  if (rest[0] === '/') return rest;
  if (rest[0] === '?') return `/${rest}`;
  return undefined;
}
