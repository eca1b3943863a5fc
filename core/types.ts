// Public types of the service object every adapter mounts.

import type { Engine } from '../engine/types.ts';
import type { HasherFactory } from '../lib/blake3.ts';
import type { Providers } from '../providers/types.ts';
import type { Storage } from '../storage/types.ts';
import type { AssetView } from './assets/view.ts';
import type { CreditsProvider } from './jobs/credits.ts';
import type { SseSource } from './jobs/sse.ts';

/** A WebSocket connection as the core sees it; adapters wrap their native socket. */
export interface WsPeer {
  readonly id: string;
  /** The request that opened the connection (URL carries query parameters). */
  readonly request: Request;
  /** What `upgrade` returned as `context` when it accepted the connection. */
  readonly context?: unknown;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  /**
   * Bytes sent but not yet handed to the network (the client is not reading).
   * The core closes a peer that lets this grow past its cap; an adapter that
   * cannot tell leaves it out.
   */
  bufferedAmount?(): number;
}

/**
 * Runtime-neutral WebSocket hooks. An adapter calls `upgrade` with the HTTP
 * request; a Response means "refuse with this", `{ accept: true }` means
 * complete the handshake and then call `open`.
 */
export interface WebSocketHooks {
  upgrade(request: Request): Promise<Response | { accept: true; context?: unknown }>;
  open(peer: WsPeer): void;
  message(peer: WsPeer, data: string | Uint8Array): void;
  close(peer: WsPeer, code: number, reason: string): void;
}

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Accounts known at start: API keys given in plain text are hashed before storage. */
export interface AccountOption {
  id: string;
  tier?: string;
  /** Plain API keys; only their SHA-256 hashes are stored. */
  apiKeys?: string[];
  /** Already-hashed keys (`sha256:<hex>`), e.g. from a secrets manager. */
  apiKeyHashes?: string[];
}

/** Result of a content scan; `delete` removes the asset record. */
// biome-ignore lint/suspicious/noConfusingVoidType: a scanner that returns nothing keeps the asset, so `void` is part of the public type.
export type ScanVerdict = void | { action: 'keep' } | { action: 'delete'; reason?: string };

export interface ScannerContext {
  /** The uploaded bytes, streamed from the blob store. */
  open(): Promise<ReadableStream<Uint8Array>>;
}

export type Scanner = (asset: AssetView, ctx: ScannerContext) => Promise<ScanVerdict> | ScanVerdict;

/** Whether an account may run workflows through the cloud-compatible surface. */
export interface SubscriptionProvider {
  isActive(accountId: string): Promise<boolean>;
}

export interface ServiceOptions {
  storage: Storage;
  /** A static bearer token for self-hosted use; requests must present it. */
  token?: string;
  /** Account-scoped API keys; when given, every v2 request must carry one. */
  accounts?: AccountOption[];
  /** Largest accepted upload body, bytes. Default 110 MB. */
  maxUploadBytes?: number;
  /** Default asset retention, seconds; null = assets never expire. Default null. */
  defaultRetentionSeconds?: number | null;
  /** Lifetime of signed content URLs, seconds. Default 3600. */
  signedUrlTtlSeconds?: number;
  /**
   * Seconds a download redirect lives; 0 (the default) serves every download
   * through the service. When above 0 and the blob store signs URLs (the S3
   * store), GET of an asset's content answers 302 to a presigned URL of the
   * store with this lifetime, so the bytes go from the store to the client.
   */
  downloadRedirectSeconds?: number;
  /** HMAC key for signed URLs. Default: a random key persisted in storage. */
  signingSecret?: string;
  /**
   * Absolute origin and path every link starts with, e.g. behind a proxy
   * (https://example.com/graph). Default: the request's origin plus the
   * mount prefix the adapter passes with it (FetchOptions.mountPrefix).
   */
  publicBaseUrl?: string;
  /** Interval of the expiry and blob collection sweep, ms; 0 disables. Default 60000. */
  sweepIntervalMs?: number;
  /**
   * A blob file without its row (a crash between publishing an upload's
   * bytes and recording them) is removed by the sweep once this old, seconds.
   * Default 3600.
   */
  orphanBlobGraceSeconds?: number;
  scanner?: Scanner;
  /** blake3 hasher per upload. Default: hash-wasm on the request thread. */
  hasher?: HasherFactory;
  logger?: Logger;
  /** Clock, for tests. */
  now?: () => number;

  /** Cloud-compatible surface: none means every subscription is active. */
  subscriptions?: SubscriptionProvider;
  /** Runs the jobs. Default: the in-process engine with the built-in nodes. */
  engine?: Engine;
  /** Parallel jobs per account tier, merged over free 1, standard 1, creator 3, pro 5. */
  tierLimits?: Record<string, number>;
  /** Queued jobs (all accounts) before submissions get 429 `queue_full`. Default 10000; see also maxQueuedPerAccount. */
  maxQueueDepth?: number;
  /** Asked before a job is accepted; none = credits are unlimited. */
  credits?: CreditsProvider;
  /** How long a job and its outputs are kept after submission, seconds. Default 7 days. */
  jobRetentionSeconds?: number;
  /** Largest accepted POST /api/v2/jobs body, bytes. Default 8 MiB. */
  maxWorkflowBytes?: number;
  /** Most nodes one workflow may have (a larger one is refused as invalid_workflow). Default 10000. */
  maxWorkflowNodes?: number;
  /**
   * Memory one job may take, bytes: the built-in engine refuses a workflow
   * whose declared sizes cannot fit (invalid_workflow, memory_budget_exceeded)
   * and fails a job with OOMError before a node would go over; /upload/mask
   * refuses an image whose decoding would (400). Default 1 GiB.
   */
  maxJobMemoryBytes?: number;
  /** Queued jobs one account may have before its submissions get 429 `queue_full`. Default 100. */
  maxQueuedPerAccount?: number;
  /** Open event streams per account before 429 `too_many_streams`. Default 16. */
  maxEventStreams?: number;
  /**
   * Jobs a crash left running, found at start: run again from the queue
   * ('rerun', default) or fail with error code `job_interrupted`.
   */
  interruptedJobs?: 'rerun' | 'fail';
  /**
   * How long a runner's hold on a job it runs lasts without renewal, seconds
   * (renewed every second while the job runs). With runners sharing the
   * storage, a job whose runner died returns to the queue (or fails, per
   * `interruptedJobs`) once its lease expires. Default 30.
   */
  jobLeaseSeconds?: number;
  /** Jobs this instance executes at once, whatever the tiers allow. Default 4. */
  maxConcurrentJobs?: number;
  /** False: this instance serves the API only and never executes jobs. Default true. */
  runJobs?: boolean;
  /** Interval of SSE keepalive comments, ms. Default 15000. */
  sseKeepaliveMs?: number;
  /** Least interval between two progress (and preview) pushes of a job, ms. Default 500. */
  progressIntervalMs?: number;
  /** Unsent bytes a `/ws` peer may have before it is closed (1008) as too slow. Default 8 MiB. */
  maxWebSocketBufferedBytes?: number;

  /**
   * The generators of /proxy/musicgen, /proxy/videogen and their partner
   * nodes. Default: the local music synthesizer and the local video renderer.
   */
  providers?: Partial<Providers>;
  /** Music generations one account may run at once before 429 `rate_limited`. Default 2. */
  musicConcurrencyPerAccount?: number;

  /**
   * Requests the service sends out itself (video key frames by URL,
   * callback_url deliveries) and the built-in engine's LoadImageFromURL may
   * reach private, loopback and link-local hosts. Default false.
   */
  allowPrivateUrls?: boolean;
  /**
   * DNS lookup for the outbound guard, so a name resolving into the private
   * network is refused too (the Node adapter's `resolveHostWithDns`).
   * Without it only literal addresses and local-only names are checked.
   */
  resolveHost?: (hostname: string) => Promise<string[]>;
  /**
   * Deliveries to a video task's callback_url: tries per state change
   * (default 6), the first retry's delay (default 1000 ms, doubling up to
   * `maxDelayMs`, default 60000) and each try's time limit (default 10000 ms).
   * They go through the webhook outbox (durable, retried after a restart);
   * with a `secret` (as for `webhooks`) they are signed the Standard Webhooks
   * way too.
   */
  videoCallbacks?: { attempts?: number; initialDelayMs?: number; maxDelayMs?: number; timeoutMs?: number; secret?: string };
  /**
   * Endpoints that receive job events (job.succeeded, job.failed,
   * job.canceled) as signed Standard Webhooks POSTs, from a durable outbox:
   * at least once, retried with backoff, through the outbound URL guard
   * (`allowPrivateUrls` for a receiver on a private address). Every instance
   * on a storage should be given the same list.
   */
  webhooks?: WebhookEndpoint[];
  /** How webhook deliveries are retried and kept; see WebhookDeliveryOptions. */
  webhookDelivery?: WebhookDeliveryOptions;

  /**
   * The operator's secret: when set, `/metrics` and `/ops/*` need
   * `Authorization: Bearer <operatorToken>`. Unset, they are open, as
   * `/healthz` and `/readyz` always are.
   */
  operatorToken?: string;
  /**
   * How often (ms, default 5000) this instance re-reads the engine servers
   * registered through /ops/servers and brings its engine's pool in line, so
   * that every runner on a shared database converges on the same set (with
   * an event bus a change reaches the others at once; this is the fallback).
   * 0: only at start and on bus messages.
   */
  serverSyncIntervalMs?: number;
  /**
   * The deployment this service is (one lower-case DNS label, default
   * 'default'): what its logs and `/ops/deployment` call it, and the id a
   * deployment gateway (createDeploymentGateway) addresses it by. Its
   * condition (ready, not ready, stopped) is kept in its storage.
   */
  deploymentId?: string;
  /**
   * More families for `GET /metrics`, e.g. the runtime's process metrics
   * (CPU, memory, event-loop delay: the Node adapter's
   * `createProcessMetrics()`, which `graphrun serve` passes). The core has
   * none of its own: it runs where no process can be looked at.
   */
  metrics?: MetricsSource;
}

/** Prometheus text appended to the service's own at every scrape of `GET /metrics`. */
export interface MetricsSource {
  /** Whole families in the text format 0.0.4 (`# HELP`, `# TYPE`, samples), none named `graphrun_*`. */
  collect(): Promise<string> | string;
}

/** The job events a webhook endpoint may receive. */
export type WebhookEventType = 'job.succeeded' | 'job.failed' | 'job.canceled';

/** An operator's webhook endpoint. */
export interface WebhookEndpoint {
  /** Where events are POSTed (http or https). */
  url: string;
  /**
   * The signing key, as Standard Webhooks writes it: `whsec_` and the base64
   * of 24 to 64 random bytes. The receiver verifies with the same string
   * (`new Webhook(secret).verify(body, headers)`).
   */
  secret: string;
  /** The events it receives; left out or `*`: all of them. */
  events?: Array<WebhookEventType | '*'>;
}

/** Retries and retention of webhook deliveries. */
export interface WebhookDeliveryOptions {
  /** Tries per delivery before it is given up (dead). Default 24. */
  attempts?: number;
  /** Delay before the first retry, ms, doubling (±20 % jitter) up to maxDelayMs. Default 5000. */
  initialDelayMs?: number;
  /** Longest delay between tries, ms. Default 3600000 (an hour). */
  maxDelayMs?: number;
  /** Time limit of one try, ms. Default 10000. */
  timeoutMs?: number;
  /** A delivery not done this long after its event is given up, seconds. Default 86400. */
  maxAgeSeconds?: number;
  /** Delivered and given-up deliveries are removed by the sweep after this, seconds. Default 7 days. */
  retentionSeconds?: number;
  /** How often an instance looks for deliveries due (those it writes itself go at once), ms. Default 10000. */
  pollIntervalMs?: number;
}

/** What one sweep pass did. */
export interface SweepResult {
  /** Asset records past their retention, deleted. */
  expired: number;
  /** Blobs no asset references any more, deleted (row and bytes). */
  blobs_removed: number;
  /** Finished jobs past their retention, moved to `expired`. */
  jobs_expired: number;
  /** Blob files that had no row (left by a crash), deleted; counted only on passes that list the blob store. */
  orphans_removed: number;
}

/** What an adapter knows about a request beyond the Request itself, and how it answers. */
export interface FetchOptions {
  /**
   * The path the service is mounted under ('/graph'), as sent on the wire.
   * The request's URL is already stripped of it (the service routes
   * `/api/v2/...`); every link the service builds for this request carries it.
   */
  mountPrefix?: string;
  /**
   * Builds the JSON answers of the hot read paths (a job, an asset), for an
   * adapter that writes such bodies itself and need not have a Web stream
   * made for them (the Node adapter). Default `Response.json`.
   */
  jsonResponse?: (value: unknown, init: ResponseInit) => Response;
  /**
   * The same for a body already serialized (a finished job's kept view).
   * Without it, an adapter's `jsonResponse` gets the text parsed back; with
   * neither, a Response over the text.
   */
  jsonTextResponse?: (text: string, init: ResponseInit) => Response;
  /**
   * Builds the answer that carries a Server-Sent Events stream (a job's
   * events), for an adapter that writes the frames to its socket itself and
   * so attaches a sink to `source` rather than reading a Web stream (the
   * Node adapter). Default a Response over `source.stream`.
   */
  eventStreamResponse?: (source: SseSource, init: ResponseInit) => Response;
  /**
   * The request's whole body, already read by the adapter (a small one whose
   * length the headers gave): a handler that reads a body whole (JSON) takes
   * these bytes instead of reading `request.body`, which carries the same.
   */
  requestBody?: Uint8Array;
  /**
   * The adapter can only return whole responses (AWS Lambda's buffered
   * mode): an endpoint that must stream (music generation) refuses up front,
   * before anything is charged.
   */
  buffered?: boolean;
}

/** The statuses of the refusals an adapter makes itself (`Service.refuse`). */
export type RefusalStatus = 400 | 404 | 413 | 415 | 500;

export interface Service {
  fetch(request: Request, options?: FetchOptions): Promise<Response>;
  /** The deployment a service made by createService is (its `deploymentId`); a gateway of several has none. */
  readonly deploymentId?: string;
  websocket: WebSocketHooks;
  /** One expiry + collection pass now (the timer runs it periodically). */
  sweep(): Promise<SweepResult>;
  /**
   * The answer to a request the adapter refuses itself (an unreadable
   * request, a body over its limit, a failure around the service), in the
   * error shape of the surface that owns the request's path; without a
   * request (none could be made of what arrived), in the v2 envelope.
   */
  refuse(status: RefusalStatus, message?: string, request?: Request): Response;
  /** Resolves when background work (scans) started so far has finished. */
  idle(): Promise<void>;
  close(): Promise<void>;
}
