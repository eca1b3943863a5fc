// One try of one claimed delivery: the body (stored, or built now and kept
// for the retries), the Standard Webhooks headers, a POST through the
// outbound URL guard, and the row settled from what happened: 2xx
// delivered; 410 Gone or a refusal of the guard given up at once; anything
// else tried again after the backoff, or given up once out of tries. Each
// failure is logged.
import { OutboundUrlError, parseOutboundUrl, postJson, type UrlPolicy } from '../../lib/net/url-guard.ts';
import type { WebhookDelivery, WebhookOutboxStore, WebhookSettlement } from '../../storage/types.ts';
import { errorText } from '../log.ts';
import type { Logger } from '../types.ts';
import { nextAttemptAt } from './backoff.ts';
import type { DeliveryKind } from './delivery-kind.ts';
import { webhookHeaders } from './signature.ts';

export interface AttemptDeps {
  store: WebhookOutboxStore;
  owner: string;
  policy: UrlPolicy;
  logger: Logger;
  now: () => number;
  /** Aborted when the service closes: the try is cut short and the row put back for the next start. */
  signal: AbortSignal;
}

/** How soon a row this instance cannot send is looked at again (by whichever instance can). */
export const UNSENT_RETRY_MS = 10_000;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export async function attemptDelivery(deps: AttemptDeps, kind: DeliveryKind, row: WebhookDelivery): Promise<void> {
  const { logger, now, signal } = deps;
  const fields = kind.logFields(row);
  const label = kind.label;
  let built: string | undefined;

  async function settle(outcome: WebhookSettlement): Promise<void> {
    const pending = outcome.state === 'pending' && built !== undefined ? { ...outcome, payload: built } : outcome;
    if (!(await deps.store.settleWebhookDelivery(row.id, { owner: deps.owner, attempts: row.attempts }, pending))) {
      // Held past its lease and taken over: whoever holds it now settles it.
      logger.warn(`${label}: its claim ran out before the try ended`, { ...fields, attempt: row.attempts });
    }
  }

  async function failed(failure: string): Promise<void> {
    const at = now();
    const next = nextAttemptAt(kind.settings, row.attempts, row.created_at, at);
    if (next === null) {
      logger.error(`${label} given up`, { ...fields, attempts: row.attempts, error: failure });
      return settle({ state: 'dead', at, error: failure });
    }
    logger.warn(`${label} failed; retrying`, { ...fields, attempt: row.attempts, retry_in_ms: next - at, error: failure });
    return settle({ state: 'pending', next_attempt_at: next, error: failure });
  }

  let target: URL;
  try {
    target = parseOutboundUrl(row.endpoint);
  } catch (err) {
    logger.warn(`${label} not sent: invalid URL`, { ...fields, error: message(err) });
    return settle({ state: 'dead', at: now(), error: message(err) });
  }
  const secret = kind.secret(row);
  if (secret === null) {
    // Another instance may know the endpoint (a configuration being rolled out): this claim sent nothing, so it costs no try.
    const at = now();
    const error = `the endpoint ${row.endpoint} is not configured on this instance`;
    if (at - row.created_at >= kind.settings.maxAgeMs) return settle({ state: 'dead', at, error });
    return settle({ state: 'pending', next_attempt_at: at + UNSENT_RETRY_MS, error, untried: true });
  }
  let body = row.payload;
  if (body === null) {
    try {
      body = await kind.build(row);
    } catch (err) {
      logger.error(`${label}: its body could not be built`, { ...fields, error: errorText(err) });
      return failed(`its body could not be built: ${message(err)}`);
    }
    if (body === null) {
      logger.warn(`${label} given up: what it is about no longer exists`, fields);
      return settle({ state: 'dead', at: now(), error: 'what it is about no longer exists' });
    }
    built = body;
  }
  let failure: string;
  try {
    const headers = {
      'user-agent': kind.userAgent,
      ...webhookHeaders({ id: row.event_id, timestampSeconds: Math.floor(now() / 1000), body, secret }),
    };
    const { status } = await postJson(target, body, { ...deps.policy, timeoutMs: kind.settings.timeoutMs, signal, headers });
    if (status >= 200 && status < 300) return settle({ state: 'delivered', at: now() });
    // Standard Webhooks: 410 says "stop sending this"; the endpoint stays configured, this event is not retried.
    if (status === 410) {
      logger.warn(`${label} given up: the receiver answered 410 Gone`, { ...fields, attempts: row.attempts });
      return settle({ state: 'dead', at: now(), error: 'HTTP 410' });
    }
    failure = `HTTP ${status}`;
  } catch (err) {
    if (signal.aborted) return settle({ state: 'pending', next_attempt_at: now(), error: 'interrupted: the service was closing', untried: true });
    if (err instanceof OutboundUrlError && (err.kind === 'refused' || err.kind === 'invalid')) {
      logger.warn(`${label} refused by the outbound guard`, { ...fields, error: err.message });
      return settle({ state: 'dead', at: now(), error: err.message });
    }
    failure = message(err);
  }
  return failed(failure);
}
