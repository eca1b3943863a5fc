// Each state change of a video task is POSTed to its callback_url: the task
// record as JSON, built as the change is made. It goes through the webhook
// outbox (core/webhooks): the row is written in the transaction of the
// change, so it survives a restart; the task's callbacks go out in state
// order, each retried with backoff (videoCallbacks: tries, delays, time
// limit; no jitter) before the next one, through the outbound guard, never
// holding up the task or the API. Failures are logged; a refused or invalid
// URL is not retried. Signed the Standard Webhooks way when the operator
// gave videoCallbacks a secret.
import { stringifyJson } from '../../../lib/json.ts';
import type { NewWebhookDelivery, VideoTaskRecord } from '../../../storage/types.ts';
import type { ServiceBase } from '../../context.ts';
import type { DeliveryKind } from '../../webhooks/delivery-kind.ts';
import { newEventId } from '../../webhooks/job-events.ts';
import { taskView } from './record.ts';
import { TASK_STATES, type TaskState } from './states.ts';

export const VIDEO_CALLBACK = 'video_callback';

/** The callback announcing `task` (as it is once its change commits); none without a callback_url. */
export async function callbackDeliveries(ctx: ServiceBase, task: VideoTaskRecord): Promise<NewWebhookDelivery[]> {
  const url = task.request.callback_url;
  if (typeof url !== 'string') return [];
  const body = await taskView(ctx, task, task.link_base);
  return [
    {
      id: crypto.randomUUID(),
      event_id: newEventId(),
      kind: VIDEO_CALLBACK,
      endpoint: url,
      event_type: task.state,
      subject: task.id,
      // The states' order is the callbacks' order.
      seq: TASK_STATES.indexOf(task.state as TaskState),
      payload: stringifyJson(body),
      created_at: ctx.now(),
    },
  ];
}

export function videoCallbackKind(ctx: ServiceBase): DeliveryKind {
  const { secret, ...retry } = ctx.config.videoCallbacks;
  return {
    label: 'video callback',
    settings: { ...retry, maxAgeMs: Number.POSITIVE_INFINITY, jitter: false },
    userAgent: 'graphrun-videogen-callback',
    logFields: (row) => ({ task_id: row.subject, state: row.event_type, callback_url: row.endpoint }),
    secret: () => secret,
    // Written with their body: the record as the change left it.
    build: async () => null,
  };
}
