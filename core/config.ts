// The service's settings with every default applied, worked out once from the
// options createService was given. Handlers and components read these; no
// code looks at the raw options after this.

import type { UrlPolicy } from '../lib/net/url-guard.ts';
import { DEPLOYMENT_ID } from './deployments/condition.ts';
import type { ServiceOptions } from './types.ts';
import {
  positive,
  resolveWebhookDelivery,
  resolveWebhookEndpoints,
  type WebhookDeliverySettings,
  type WebhookEndpointConfig,
  webhookSecretProblem,
} from './webhooks/settings.ts';

export const DEFAULT_MAX_UPLOAD_BYTES = 110 * 1024 * 1024;
const DEFAULT_JOB_RETENTION_SECONDS = 7 * 24 * 3600;
const DEFAULT_MAX_WORKFLOW_BYTES = 8 * 1024 * 1024;
const DEFAULT_MAX_JOB_MEMORY_BYTES = 1024 ** 3;
export const DEFAULT_MUSIC_CONCURRENCY = 2;

/** Deliveries to a video task's callback_url. */
export interface CallbackSettings {
  attempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  timeoutMs: number;
  /** Signs the callbacks the Standard Webhooks way when set. */
  secret?: string;
}

const DEFAULT_CALLBACK_SETTINGS: CallbackSettings = { attempts: 6, initialDelayMs: 1000, maxDelayMs: 60_000, timeoutMs: 10_000 };

export interface ServiceConfig {
  maxUploadBytes: number;
  /** Seconds; null = assets never expire. */
  defaultRetentionSeconds: number | null;
  signedUrlTtlSeconds: number;
  /** 0: downloads go through the service; else the lifetime of a redirect to the blob store's presigned URL. */
  downloadRedirectSeconds: number;
  /** `publicBaseUrl` without its trailing slash, and its path: what links start with when it is set. */
  publicBase: { base: string; path: string } | null;
  sweepIntervalMs: number;
  /** How old a blob file without its row must be before the sweep removes it. */
  orphanBlobGraceMs: number;
  /** Whether this instance executes jobs (false: it serves the API only). */
  runJobs: boolean;
  maxConcurrentJobs: number;
  jobRetentionMs: number;
  maxWorkflowBytes: number;
  maxWorkflowNodes: number;
  /** Memory one job may take; /upload/mask decodes within it too. */
  maxJobMemoryBytes: number;
  maxQueuedPerAccount: number;
  maxEventStreams: number;
  sseKeepaliveMs: number;
  progressIntervalMs: number;
  interruptedJobs: 'rerun' | 'fail';
  /** How long a lease on a running job lasts unless renewed, ms. */
  jobLeaseMs: number;
  tierLimits: Record<string, number> | undefined;
  maxQueueDepth: number | undefined;
  maxWebSocketBufferedBytes: number | undefined;
  musicConcurrencyPerAccount: number;
  videoCallbacks: CallbackSettings;
  /** The operator's webhook endpoints, checked. */
  webhooks: WebhookEndpointConfig[];
  webhookDelivery: WebhookDeliverySettings;
  /** The operator's policy for requests the service sends out itself. */
  outbound: UrlPolicy;
  /** Required for /metrics and /ops/* when set. */
  operatorToken: string | undefined;
  serverSyncIntervalMs: number;
  deploymentId: string;
}

function deploymentId(raw: string | undefined): string {
  if (raw === undefined) return 'default';
  if (!DEPLOYMENT_ID.test(raw)) {
    throw new TypeError(`deploymentId must be one lower-case DNS label (a-z, 0-9 and inner hyphens, at most 63), got ${JSON.stringify(raw)}`);
  }
  return raw;
}

function jobLeaseMs(seconds: number | undefined): number {
  if (seconds === undefined) return 30_000;
  // Renewed every second: a lease of a few seconds survives a slow renewal or two.
  if (!Number.isFinite(seconds) || seconds < 3 || seconds > 3600) throw new TypeError(`jobLeaseSeconds must be from 3 to 3600, got ${seconds}`);
  return Math.round(seconds * 1000);
}

function downloadRedirectSeconds(raw: number | undefined): number {
  if (raw === undefined || raw === 0) return 0;
  // S3 presigns for a week at most.
  if (!Number.isInteger(raw) || raw < 1 || raw > 604_800) {
    throw new TypeError(`downloadRedirectSeconds must be 0 or an integer from 1 to 604800, got ${raw}`);
  }
  return raw;
}

function publicBase(raw: string | undefined): ServiceConfig['publicBase'] {
  if (!raw) return null;
  return { base: raw.replace(/\/+$/, ''), path: new URL(raw).pathname.replace(/\/+$/, '') };
}

function videoCallbacks(options: ServiceOptions['videoCallbacks']): CallbackSettings {
  const o = options ?? {};
  const d = DEFAULT_CALLBACK_SETTINGS;
  // Each knob checked (an explicit undefined is the default): a NaN delay or lease would stall the outbox.
  const settings: CallbackSettings = {
    attempts: positive(o.attempts, d.attempts, 'videoCallbacks.attempts', true),
    initialDelayMs: positive(o.initialDelayMs, d.initialDelayMs, 'videoCallbacks.initialDelayMs'),
    maxDelayMs: positive(o.maxDelayMs, d.maxDelayMs, 'videoCallbacks.maxDelayMs'),
    timeoutMs: positive(o.timeoutMs, d.timeoutMs, 'videoCallbacks.timeoutMs'),
    ...(o.secret !== undefined && { secret: o.secret }),
  };
  const problem = settings.secret === undefined ? null : webhookSecretProblem(settings.secret);
  if (problem) throw new TypeError(`videoCallbacks.secret ${problem}`);
  return settings;
}

export function resolveConfig(options: ServiceOptions): ServiceConfig {
  return {
    maxUploadBytes: options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    defaultRetentionSeconds: options.defaultRetentionSeconds ?? null,
    signedUrlTtlSeconds: options.signedUrlTtlSeconds ?? 3600,
    downloadRedirectSeconds: downloadRedirectSeconds(options.downloadRedirectSeconds),
    publicBase: publicBase(options.publicBaseUrl),
    sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
    orphanBlobGraceMs: (options.orphanBlobGraceSeconds ?? 3600) * 1000,
    runJobs: options.runJobs ?? true,
    maxConcurrentJobs: options.maxConcurrentJobs ?? 4,
    jobRetentionMs: (options.jobRetentionSeconds ?? DEFAULT_JOB_RETENTION_SECONDS) * 1000,
    maxWorkflowBytes: options.maxWorkflowBytes ?? DEFAULT_MAX_WORKFLOW_BYTES,
    maxWorkflowNodes: options.maxWorkflowNodes ?? 10_000,
    maxJobMemoryBytes: options.maxJobMemoryBytes ?? DEFAULT_MAX_JOB_MEMORY_BYTES,
    maxQueuedPerAccount: options.maxQueuedPerAccount ?? 100,
    maxEventStreams: options.maxEventStreams ?? 16,
    sseKeepaliveMs: options.sseKeepaliveMs ?? 15_000,
    progressIntervalMs: options.progressIntervalMs ?? 500,
    interruptedJobs: options.interruptedJobs ?? 'rerun',
    jobLeaseMs: jobLeaseMs(options.jobLeaseSeconds),
    tierLimits: options.tierLimits,
    maxQueueDepth: options.maxQueueDepth,
    maxWebSocketBufferedBytes: options.maxWebSocketBufferedBytes,
    musicConcurrencyPerAccount: options.musicConcurrencyPerAccount ?? DEFAULT_MUSIC_CONCURRENCY,
    videoCallbacks: videoCallbacks(options.videoCallbacks),
    webhooks: resolveWebhookEndpoints(options.webhooks),
    webhookDelivery: resolveWebhookDelivery(options.webhookDelivery),
    outbound: outboundPolicy(options),
    operatorToken: options.operatorToken || undefined,
    serverSyncIntervalMs: options.serverSyncIntervalMs ?? 5000,
    deploymentId: deploymentId(options.deploymentId),
  };
}

/**
 * The operator's policy for requests the service itself sends out (video key
 * frames by URL, callback_url deliveries), the same switch and resolver the
 * built-in engine's LoadImageFromURL and the local video renderer follow.
 */
export function outboundPolicy(options: Pick<ServiceOptions, 'allowPrivateUrls' | 'resolveHost'>): UrlPolicy {
  return { allowPrivate: options.allowPrivateUrls === true, resolveHost: options.resolveHost };
}
