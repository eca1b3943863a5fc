// The one object every handler and component of a service receives: the
// resolved settings, the stores, the engine and providers it was given, and
// the long-lived components built on them. buildContext makes it, once per
// service, in two steps: the shared parts first (ServiceBase), then the
// components that need them, so no part is ever half-built.
import type { Engine } from '../engine/types.ts';
import { createHasher, type HasherFactory } from '../lib/blake3.ts';
import type { Providers } from '../providers/types.ts';
import type { BlobStore, EventBus, MetadataStore } from '../storage/types.ts';
import { type BlobLocks, createBlobLocks } from './assets/blob-locks.ts';
import { type Authenticator, createAuthenticator } from './auth.ts';
import { type BackgroundTasks, createBackgroundTasks } from './background.ts';
import { resolveConfig, type ServiceConfig } from './config.ts';
import { createDeploymentCondition, type DeploymentCondition } from './deployments/condition.ts';
import type { CreditsProvider } from './jobs/credits.ts';
import { createJobSystem, type JobSystem } from './jobs/system.ts';
import { consoleLogger } from './log.ts';
import { createInstanceMetrics, type InstanceMetrics } from './ops/instance-metrics.ts';
import { createServerSync, type ServerSync } from './ops/servers/sync.ts';
import { createGenerationLimiter, type GenerationLimiter } from './proxy/music/limiter.ts';
import { createVideoTaskSystem, type VideoTaskSystem } from './proxy/video/tasks.ts';
import { createUrlSigner, randomSecret, type UrlSigner } from './signing.ts';
import type { Logger, Scanner, ServiceOptions, SubscriptionProvider } from './types.ts';
import { createWebhookDeliveries, type WebhookDeliveries } from './webhooks/deliveries.ts';
import { withJobEvents } from './webhooks/job-events.ts';

/** What createService needs beyond the options a user may leave out: the engine and the providers, chosen by the caller. */
export interface CoreServiceOptions extends Omit<ServiceOptions, 'engine' | 'providers'> {
  engine: Engine;
  providers: Providers;
}

/** The shared parts: everything a component may use while it is being built. */
export interface ServiceBase {
  config: ServiceConfig;
  metadata: MetadataStore;
  blobs: BlobStore;
  /** Job events between the instances on the storage; none where one process owns it. */
  events: EventBus | undefined;
  engine: Engine;
  providers: Providers;
  auth: Authenticator;
  signer: UrlSigner;
  /** Per-blob-key lock shared by commits and collection: across the processes on the storage when it can. */
  blobLocks: BlobLocks;
  logger: Logger;
  now: () => number;
  scanner: Scanner | undefined;
  subscriptions: SubscriptionProvider | undefined;
  /** The operator's credits; none = unlimited. */
  credits: CreditsProvider | undefined;
  createHasher: HasherFactory;
  /** Work that runs after the response; close() waits for it. */
  background: BackgroundTasks;
  /** The sender of the outbox (webhooks of job events, video callbacks): wake it after writing rows. */
  webhooks: WebhookDeliveries;
  /** What this instance counts as things happen (uploads, job timings, /ws connections), for /metrics. */
  metrics: InstanceMetrics;
  /** The deployment this service is, and its condition (ready, not ready, stopped). */
  deployment: DeploymentCondition;
}

export interface ServiceContext extends ServiceBase {
  /** Engine, scheduler, live events: the job machinery of this instance. */
  jobs: JobSystem;
  /** Multi-frame video tasks running on this instance. */
  videoTasks: VideoTaskSystem;
  /** Music generations under way per account. */
  musicSlots: GenerationLimiter;
  /** The engine pool kept in line with the stored engine servers (/ops/servers). */
  servers: ServerSync;
}

export async function buildContext(options: CoreServiceOptions): Promise<ServiceContext> {
  const { metadata, blobs, events } = options.storage;
  const logger = options.logger ?? consoleLogger;
  const now = options.now ?? Date.now;
  await metadata.migrate();
  // A persisted random key keeps signed URLs valid across restarts without configuration.
  const secret = options.signingSecret ?? (await metadata.initSetting('url_signing_secret', randomSecret()));
  const config = resolveConfig(options);
  const webhooks = createWebhookDeliveries({
    store: metadata,
    policy: config.outbound,
    logger,
    now,
    pollIntervalMs: config.webhookDelivery.pollIntervalMs,
  });
  const base: ServiceBase = {
    config,
    // Moves of jobs into an end state write the endpoints' deliveries in their own transaction.
    metadata: withJobEvents(metadata, config.webhooks, now, webhooks.wake),
    blobs,
    events,
    engine: options.engine,
    providers: options.providers,
    auth: await createAuthenticator(metadata, { token: options.token, accounts: options.accounts, now }),
    signer: await createUrlSigner(secret),
    blobLocks: createBlobLocks(metadata.blobLocks),
    logger,
    now,
    scanner: options.scanner,
    subscriptions: options.subscriptions,
    credits: options.credits,
    createHasher: options.hasher ?? createHasher,
    background: createBackgroundTasks(logger),
    webhooks,
    metrics: createInstanceMetrics(options.metrics),
    deployment: createDeploymentCondition({
      id: config.deploymentId,
      store: metadata,
      events,
      engine: options.engine,
      logger,
      now,
      intervalMs: config.serverSyncIntervalMs,
    }),
  };
  return {
    ...base,
    jobs: createJobSystem(base),
    videoTasks: createVideoTaskSystem(base),
    musicSlots: createGenerationLimiter(config.musicConcurrencyPerAccount),
    servers: createServerSync(base),
  };
}
