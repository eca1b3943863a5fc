// Which deployment a request names: by host (`{id}.{base domain}`, or
// `{id}.{staging domain}` for a staging deployment) or by path prefix
// (`/deployment/{id}/...`, for clients behind one host), else none (the
// gateway's fallback, so the URLs of a service without deployments keep
// working). A host under a configured domain (one label or more) or a prefix
// that names no deployment this gateway has is `unknown`: answered 404,
// never sent to another deployment. A configured domain itself names none.
import { DEPLOYMENT_ID } from './condition.ts';

export interface AddressBook {
  /** Production deployments by id. */
  production: ReadonlySet<string>;
  /** Staging deployments by id. */
  staging: ReadonlySet<string>;
  baseDomains: readonly string[];
  stagingDomains: readonly string[];
  /** '/deployment' by default; null when deployments are addressed by host only. */
  pathPrefix: string | null;
}

export type Address =
  | { kind: 'none' }
  | { kind: 'host'; id: string }
  /** `prefix` is the part of the path that named it ('/deployment/x'); `rest` what the deployment routes ('/api/v2/jobs'). */
  | { kind: 'path'; id: string; prefix: string; rest: string }
  | { kind: 'unknown'; id: string; staging: boolean; rest: string };

/** What stands in front of one of `domains` when the host is under it (`{label}.{domain}`, the label maybe dotted); null otherwise. */
function labelUnder(host: string, domains: readonly string[]): string | null {
  for (const domain of domains) {
    if (host.length > domain.length + 1 && host.endsWith(domain) && host[host.length - domain.length - 1] === '.') {
      return host.slice(0, host.length - domain.length - 1);
    }
  }
  return null;
}

/** A host under a domain: the deployment its label names, if it is one label of a deployment of that kind; else unknown (a deployment is one label). */
function byHost(label: string, ids: ReadonlySet<string>, staging: boolean, path: string): Address {
  return !label.includes('.') && ids.has(label) ? { kind: 'host', id: label } : { kind: 'unknown', id: label, staging, rest: path };
}

export function addressOf(book: AddressBook, hostname: string, path: string): Address {
  // Hosts compare without case and without the root's trailing dot.
  const host = hostname.toLowerCase().replace(/\.$/, '');
  // A domain itself (run.example.com, stg.run.example.com) names no deployment: the path prefix may.
  if (!book.stagingDomains.includes(host) && !book.baseDomains.includes(host)) {
    // Staging first: its domains usually sit under a base domain (stg.run.example.com).
    const staging = labelUnder(host, book.stagingDomains);
    if (staging !== null) return byHost(staging, book.staging, true, path);
    const production = labelUnder(host, book.baseDomains);
    if (production !== null) return byHost(production, book.production, false, path);
  }
  const prefix = book.pathPrefix;
  if (prefix !== null && path.startsWith(prefix) && path[prefix.length] === '/') {
    const end = path.indexOf('/', prefix.length + 1);
    const id = path.slice(prefix.length + 1, end === -1 ? undefined : end);
    const rest = end === -1 ? '/' : path.slice(end);
    if (book.production.has(id) || book.staging.has(id)) return { kind: 'path', id, prefix: `${prefix}/${id}`, rest };
    if (DEPLOYMENT_ID.test(id)) return { kind: 'unknown', id, staging: false, rest };
  }
  return { kind: 'none' };
}

/** A configured domain: lower case, no leading or trailing dot, at least two labels. */
export function checkDomain(raw: string, what: string): string {
  const domain = raw.toLowerCase().replace(/\.$/, '');
  if (!/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(domain)) {
    throw new TypeError(`${what} must be a domain name such as run.example.com, got ${JSON.stringify(raw)}`);
  }
  return domain;
}
