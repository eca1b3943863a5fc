// What every handler receives: the stores, the resolved options and the
// shared helpers, built once by createService.
import type { BlobStore, MetadataStore } from '../storage/types.ts';
import type { Authenticator } from './auth.ts';
import type { HasherFactory } from './hash.ts';
import type { KeyedMutex } from './keyed-mutex.ts';
import type { UrlSigner } from './signing.ts';
import type { JobSystem } from './jobs/system.ts';
import type { Logger, Scanner, SubscriptionProvider } from './types.ts';

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
  createHasher: HasherFactory;
  /** Engine, scheduler, live events: the job machinery of this instance. */
  jobs: JobSystem;
  /** Runs work after the response; errors are logged, close() waits for it. */
  background(label: string, work: () => Promise<void>): void;
}

/**
 * The path the service is mounted under ('' at the root), for host-relative
 * links: taken from `publicBaseUrl`, whose path is the mount point.
 */
export function mountPrefix(ctx: Pick<ServiceContext, 'publicBaseUrl'>): string {
  if (!ctx.publicBaseUrl) return '';
  return new URL(ctx.publicBaseUrl).pathname.replace(/\/+$/, '');
}

/** Origin (plus any mount prefix) that links in responses start with. */
export function linkBase(ctx: ServiceContext, request: Request): string {
  if (ctx.publicBaseUrl) return ctx.publicBaseUrl.replace(/\/+$/, '');
  return new URL(request.url).origin;
}
