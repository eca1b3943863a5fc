// What the outbox's sender needs to know about one kind of delivery (an
// operator's webhook, a video task's callback): its retry settings, how its
// log lines read, whether and how it is signed, and its body.
import type { WebhookDelivery } from '../../storage/types.ts';
import type { RetrySettings } from './settings.ts';

export interface DeliveryKind {
  /** What log lines call one ('webhook', 'video callback'). */
  label: string;
  settings: RetrySettings;
  userAgent: string;
  /** Fields every log line about the row carries. */
  logFields(row: WebhookDelivery): Record<string, unknown>;
  /**
   * The signing secret of the row's endpoint; undefined: sent unsigned;
   * null: the endpoint is not configured on this instance (the try fails
   * and the row waits for its retry, which may find an instance that knows it).
   */
  secret(row: WebhookDelivery): string | undefined | null;
  /** The body of a row written without one, built now; null when what it is about is gone. */
  build(row: WebhookDelivery): Promise<string | null>;
}
