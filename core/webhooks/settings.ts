// The operator's webhook endpoints and delivery settings, checked once when
// the service is created: a mistake there (a URL that is not http(s), a
// secret receivers could not verify with, an unknown event) throws at
// createService with a message naming the option, not at the first delivery.
import { fromBase64 } from '../../lib/base64.ts';
import type { WebhookDeliveryOptions, WebhookEndpoint, WebhookEventType } from '../types.ts';

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = ['job.succeeded', 'job.failed', 'job.canceled'];

/** What an endpoint gets when its `events` are left out or `*`. */
const ALL_EVENTS: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/** An endpoint as deliveries use it: the URL normalized, the events as a set. */
export interface WebhookEndpointConfig {
  url: string;
  secret: string;
  events: ReadonlySet<string>;
}

/** How an outbox delivery is retried: exponential backoff from `initialDelayMs`, at most `attempts` tries within `maxAgeMs`. */
export interface RetrySettings {
  attempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** Each try's time limit. */
  timeoutMs: number;
  /** Given up once the event is this old (Infinity: only `attempts` bounds it). */
  maxAgeMs: number;
  /** Spread each delay over ±20 %, so that receivers coming back are not hit by every retry at once. */
  jitter: boolean;
}

export interface WebhookDeliverySettings extends RetrySettings {
  /** Delivered and dead rows are removed by the sweep once ended this long ago. */
  retentionMs: number;
  /** How often an instance looks for due rows written elsewhere (its own wake it at once). */
  pollIntervalMs: number;
}

const DEFAULT_DELIVERY: WebhookDeliverySettings = {
  // 5 s doubling up to an hour: about 14 hours over 24 tries, within the day.
  attempts: 24,
  initialDelayMs: 5000,
  maxDelayMs: 3_600_000,
  timeoutMs: 10_000,
  maxAgeMs: 86_400_000,
  jitter: true,
  retentionMs: 7 * 86_400_000,
  pollIntervalMs: 10_000,
};

const SECRET_PREFIX = 'whsec_';

/**
 * Why `secret` is no Standard Webhooks secret, or null when it is one:
 * `whsec_` and the base64 of 24 to 64 bytes, as the specification's
 * libraries (`new Webhook(secret)`) take it on the receiving side.
 */
export function webhookSecretProblem(secret: unknown): string | null {
  const how = `"${SECRET_PREFIX}" followed by the base64 of 24 to 64 random bytes (e.g. ${SECRET_PREFIX}$(openssl rand -base64 32))`;
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) return `must be ${how}`;
  let key: Uint8Array;
  try {
    const text = secret.slice(SECRET_PREFIX.length);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new Error('not base64');
    key = fromBase64(text);
  } catch {
    return `is not base64 after "${SECRET_PREFIX}": it must be ${how}`;
  }
  if (key.length < 24 || key.length > 64) return `decodes to ${key.length} bytes: it must be ${how}`;
  return null;
}

/** An http(s) URL with a host, normalized; throws TypeError naming `from`. */
const MAX_URL_LENGTH = 2048;

export function webhookUrl(raw: unknown, from: string): string {
  let url: URL | null = null;
  try {
    url = typeof raw === 'string' ? new URL(raw) : null;
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new TypeError(`${from} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  // As video callback_url is bounded: a URL is a row of every delivery to it.
  if (url.href.length > MAX_URL_LENGTH) throw new TypeError(`${from} must be at most ${MAX_URL_LENGTH} characters long`);
  return url.href;
}

/** The event set of `events` ('*' or none: every job event); throws TypeError naming `from`. */
export function webhookEvents(events: readonly string[] | undefined, from: string): ReadonlySet<string> {
  if (events === undefined) return ALL_EVENTS;
  if (!Array.isArray(events) || events.length === 0) {
    throw new TypeError(`${from} must list events (${WEBHOOK_EVENT_TYPES.join(', ')}) or "*", or be left out for all of them`);
  }
  const set = new Set<string>();
  for (const event of events) {
    if (event === '*') for (const e of ALL_EVENTS) set.add(e);
    else if (ALL_EVENTS.has(event)) set.add(event);
    else throw new TypeError(`${from}: unknown event ${JSON.stringify(event)}; known: ${WEBHOOK_EVENT_TYPES.join(', ')}, or "*" for all`);
  }
  return set;
}

export function resolveWebhookEndpoints(endpoints: readonly WebhookEndpoint[] | undefined): WebhookEndpointConfig[] {
  if (endpoints === undefined) return [];
  if (!Array.isArray(endpoints)) throw new TypeError('webhooks must be a list of { url, secret, events? }');
  const seen = new Set<string>();
  return endpoints.map((endpoint, i) => {
    const at = `webhooks[${i}]`;
    const url = webhookUrl(endpoint?.url, `${at}.url`);
    // Deliveries name their endpoint by URL: two entries for one URL would share its rows.
    if (seen.has(url)) throw new TypeError(`${at}.url: ${url} is listed twice; give one entry with every event it wants`);
    seen.add(url);
    const problem = webhookSecretProblem(endpoint.secret);
    if (problem) throw new TypeError(`${at}.secret ${problem}`);
    return { url, secret: endpoint.secret, events: webhookEvents(endpoint.events, `${at}.events`) };
  });
}

export function positive(value: number | undefined, fallback: number, from: string, integer = false): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new TypeError(`${from} must be a positive ${integer ? 'whole number' : 'number'}, got ${value}`);
  }
  return value;
}

export function resolveWebhookDelivery(options: WebhookDeliveryOptions | undefined): WebhookDeliverySettings {
  const o = options ?? {};
  const d = DEFAULT_DELIVERY;
  const at = (name: string) => `webhookDelivery.${name}`;
  const settings: WebhookDeliverySettings = {
    attempts: positive(o.attempts, d.attempts, at('attempts'), true),
    initialDelayMs: positive(o.initialDelayMs, d.initialDelayMs, at('initialDelayMs')),
    maxDelayMs: positive(o.maxDelayMs, d.maxDelayMs, at('maxDelayMs')),
    timeoutMs: positive(o.timeoutMs, d.timeoutMs, at('timeoutMs')),
    maxAgeMs: o.maxAgeSeconds === undefined ? d.maxAgeMs : positive(o.maxAgeSeconds, 0, at('maxAgeSeconds')) * 1000,
    jitter: d.jitter,
    retentionMs: o.retentionSeconds === undefined ? d.retentionMs : positive(o.retentionSeconds, 0, at('retentionSeconds')) * 1000,
    // setTimeout fires at once for a delay beyond 2^31 - 1 ms: an hour is plenty for a safety net.
    pollIntervalMs: Math.min(positive(o.pollIntervalMs, d.pollIntervalMs, at('pollIntervalMs')), 3_600_000),
  };
  if (settings.maxDelayMs < settings.initialDelayMs) throw new TypeError(`${at('maxDelayMs')} must not be below ${at('initialDelayMs')}`);
  return settings;
}
