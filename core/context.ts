// What every handler receives: the stores, the resolved options and the
// shared helpers, built once by createService.
import type { BlobStore, MetadataStore } from '../storage/types.ts';
import type { Authenticator } from './auth.ts';
import type { HasherFactory } from './hash.ts';
import type { KeyedMutex } from './keyed-mutex.ts';
import type { UrlSigner } from './signing.ts';
import type { JobSystem } from './jobs/system.ts';
import type { CreditsProvider } from './jobs/credits.ts';
import type { Logger, Scanner, ServiceOptions, SubscriptionProvider } from './types.ts';

export interface ServiceContext {
  metadata: MetadataStore;
  blobs: BlobStore;
  auth: Authenticator;
  signer: UrlSigner;
  /** Per-blob-key lock shared by commits and collection. */
  blobLocks: KeyedMutex;
  logger: Logger;
  now: () => number;
  maxUploadBytes: number;
  defaultRetentionSeconds: number | null;
  signedUrlTtlSeconds: number;
  publicBaseUrl: string | undefined;
  scanner: Scanner | undefined;
  subscriptions: SubscriptionProvider | undefined;
  /** The operator's credits; none = unlimited. */
  credits?: CreditsProvider;
  /** The options createService was given, for surfaces that read their own (the /proxy providers). */
  options?: Readonly<ServiceOptions>;
  createHasher: HasherFactory;
  /** Engine, scheduler, live events: the job machinery of this instance. */
  jobs: JobSystem;
  /** Runs work after the response; errors are logged, close() waits for it. */
  background(label: string, work: () => Promise<void>): void;
}

// The prefix an adapter mounted this request under (`service.fetch(request,
// { mountPrefix })`), kept beside the Request so every handler that builds a
// link from `request` finds it without another parameter.
const mounted = new WeakMap<Request, string>();

/**
 * A mount prefix as links use it: '' at the root, else '/a/b' with no
 * trailing slash. It is a path as sent on the wire (percent-encoded), put in
 * front of links verbatim; anything that is not a path is a mistake of the
 * adapter's configuration.
 */
export function normalizeMountPrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  if (trimmed !== '' && !/^\/[^?#\s]*$/.test(trimmed)) {
    throw new TypeError(`A mount prefix must be a path such as "/graph", got ${JSON.stringify(prefix)}.`);
  }
  return trimmed;
}

/** Records where the adapter mounted this request: its URL's path is already stripped of `prefix`. */
export function setMountPrefix(request: Request, prefix: string): void {
  const normalized = normalizeMountPrefix(prefix);
  if (normalized !== '') mounted.set(request, normalized);
}

/** `publicBaseUrl` without its trailing slash, and its path: worked out once per base. */
let parsedBase = { raw: '', base: '', path: '' };
function publicBase(raw: string): { base: string; path: string } {
  if (parsedBase.raw !== raw) {
    parsedBase = { raw, base: raw.replace(/\/+$/, ''), path: new URL(raw).pathname.replace(/\/+$/, '') };
  }
  return parsedBase;
}

/**
 * The path the service is mounted under ('' at the root), for host-relative
 * links: the path of `publicBaseUrl` when it is set (it names the public
 * address whole), else the prefix the adapter gave with this request.
 */
export function mountPrefix(ctx: Pick<ServiceContext, 'publicBaseUrl'>, request: Request): string {
  if (ctx.publicBaseUrl) return publicBase(ctx.publicBaseUrl).path;
  return mounted.get(request) ?? '';
}

/**
 * Where the path starts in a serialized http(s) URL (`request.url`), or -1
 * for any other: there it follows the host, which holds no '/', and no
 * userinfo (a Request refuses credentials; one with '@' is parsed anyway).
 */
function pathStart(url: string): number {
  const hostStart = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : -1;
  if (hostStart === -1) return -1;
  const slash = url.indexOf('/', hostStart);
  if (slash === -1 || url.lastIndexOf('@', slash) >= hostStart) return -1;
  return slash;
}

/** `new URL(url).pathname`, cut out of a serialized URL without parsing it again. */
export function urlPath(url: string): string {
  const start = pathStart(url);
  if (start === -1) return new URL(url).pathname;
  const query = url.indexOf('?', start);
  const fragment = url.indexOf('#', start);
  const end = query === -1 ? fragment : fragment === -1 ? query : Math.min(query, fragment);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

/** `new URL(url).origin`, likewise (the serializer already left out a default port). */
export function urlOrigin(url: string): string {
  const start = pathStart(url);
  return start === -1 ? new URL(url).origin : url.slice(0, start);
}

/** Origin plus mount prefix: what absolute links in responses start with. */
export function linkBase(ctx: Pick<ServiceContext, 'publicBaseUrl'>, request: Request): string {
  if (ctx.publicBaseUrl) return publicBase(ctx.publicBaseUrl).base;
  return urlOrigin(request.url) + (mounted.get(request) ?? '');
}
