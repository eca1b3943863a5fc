// Job events as webhook deliveries. Every move of a job into succeeded,
// failed or canceled, whoever makes it (the runner, a cancel, recovery, the
// sweep), goes through the store's transitionJob: wrapping it here adds one
// outbox row per endpoint that wants the event, written in the same
// transaction as the move (storage commits both or neither), so an event is
// never lost to a crash between the two and never sent for a move that lost.
// The row's body is built at its first try, from the job as it then is (its
// final state: GET /api/v2/jobs/{id} built by the same code), and kept for the
// retries.
import { stringifyJson } from '../../lib/json.ts';
import { forbiddenHostReason } from '../../lib/net/address-rules.ts';
import { newId } from '../../lib/uuid.ts';
import type { MetadataStore, NewWebhookDelivery } from '../../storage/types.ts';
import type { ServiceBase } from '../context.ts';
import { isoTime } from '../iso-time.ts';
import { jobView, type ViewLinks } from '../jobs/view.ts';
import type { WebhookEventType } from '../types.ts';
import type { DeliveryKind } from './delivery-kind.ts';
import type { WebhookEndpointConfig } from './settings.ts';

export const JOB_WEBHOOK = 'webhook';

const EVENT_OF_STATUS: Readonly<Record<string, WebhookEventType>> = {
  succeeded: 'job.succeeded',
  failed: 'job.failed',
  canceled: 'job.canceled',
};
/** A job's end comes after whatever else a job may announce one day. */
const END_SEQ = 100;

/** A message id: the same for every endpoint and every retry of one event. */
export const newEventId = () => `msg_${crypto.randomUUID().replaceAll('-', '')}`;

/** `metadata` whose job moves into an end state write the endpoints' deliveries with them; `written` is told after. */
export function withJobEvents(
  metadata: MetadataStore,
  endpoints: readonly WebhookEndpointConfig[],
  now: () => number,
  written: () => void,
): MetadataStore {
  if (endpoints.length === 0) return metadata;
  return {
    ...metadata,
    async transitionJob(id, from, to, patch = {}, guard) {
      const type = EVENT_OF_STATUS[to];
      const targets = type === undefined ? [] : endpoints.filter((e) => e.events.has(type));
      if (targets.length === 0) return metadata.transitionJob(id, from, to, patch, guard);
      const event_id = newEventId();
      const created_at = now();
      const rows: NewWebhookDelivery[] = targets.map((e) => ({
        id: newId(),
        event_id,
        kind: JOB_WEBHOOK,
        endpoint: e.url,
        event_type: type,
        subject: id,
        seq: END_SEQ,
        payload: null,
        created_at,
      }));
      const moved = await metadata.transitionJob(id, from, to, { ...patch, outbox: [...(patch.outbox ?? []), ...rows] }, guard);
      if (moved) written();
      return moved;
    },
  };
}

/** How the rows of job events are sent: signed with their endpoint's secret, the body the job's v2 view. */
export function jobWebhookKind(ctx: ServiceBase): DeliveryKind {
  const secrets = new Map(ctx.config.webhooks.map((e) => [e.url, e.secret]));
  // No request to take an origin from: publicBaseUrl's, or links relative to the service's host.
  const links: ViewLinks = ctx.config.publicBase
    ? { prefix: ctx.config.publicBase.path, base: ctx.config.publicBase.base }
    : { prefix: '', base: '' };
  if (!ctx.config.outbound.allowPrivate) {
    for (const { url } of ctx.config.webhooks) {
      const reason = forbiddenHostReason(new URL(url).hostname);
      if (reason)
        ctx.logger.warn('webhook endpoint on a private address: its deliveries will be refused unless allowPrivateUrls is set', {
          endpoint: url,
          reason,
        });
    }
  }
  return {
    label: 'webhook',
    settings: ctx.config.webhookDelivery,
    userAgent: 'graphrun-webhooks',
    logFields: (row) => ({ event_id: row.event_id, event_type: row.event_type, job_id: row.subject, endpoint: row.endpoint }),
    secret: (row) => secrets.get(row.endpoint) ?? null,
    async build(row) {
      const job = await ctx.metadata.getJobById(row.subject);
      if (!job) return null;
      return stringifyJson({ type: row.event_type, timestamp: isoTime(row.created_at), data: await jobView(ctx, links, job) });
    },
  };
}
