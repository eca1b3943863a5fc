// The outbox of outgoing HTTP deliveries (signed webhooks of job events,
// video tasks' callback_url POSTs): durable rows written with the state
// change they announce, claimed under a lease by one sender at a time, and
// settled as delivered, retried later, or dead. At least once: a sender that
// dies mid-send leaves its claim to expire and the row is sent again.

/** A delivery to write (state `pending`, due at once). Times are epoch ms. */
export interface NewWebhookDelivery {
  /** The row's own id. */
  id: string;
  /** The message id receivers dedup on (`webhook-id`); one event sent to several endpoints shares it. */
  event_id: string;
  /** Which sender settings apply: `webhook` (an operator's endpoint) or `video_callback`. */
  kind: string;
  /** The URL the body is POSTed to. */
  endpoint: string;
  /** `job.succeeded`, ..., or the video task state a callback announces. */
  event_type: string;
  /** The job or task the event is about: one subject's deliveries to one endpoint go out in `seq` order. */
  subject: string;
  /** Order among the subject's deliveries to the endpoint; a row waits while one with a lower seq is pending. */
  seq: number;
  /** The JSON body, or null: built at the first attempt from the subject as it then is (and kept for retries). */
  payload: string | null;
  created_at: number;
}

export type WebhookDeliveryState = 'pending' | 'delivered' | 'dead';

export interface WebhookDelivery extends NewWebhookDelivery {
  state: WebhookDeliveryState;
  /** Attempts started so far (a claim counts one). */
  attempts: number;
  /** When a pending row may be claimed next. */
  next_attempt_at: number;
  /** The sender holding the row, until `claimed_until`; null when none does. */
  claimed_by: string | null;
  claimed_until: number | null;
  /** Why the last attempt failed, or null. */
  last_error: string | null;
  /** When it was delivered or given up, or null while pending. */
  ended_at: number | null;
}

/** What claimWebhookDeliveries needs: who claims, when, for how long, and how many rows at most. */
export interface WebhookClaim {
  owner: string;
  now: number;
  lease_ms: number;
  limit: number;
}

/** How an attempt ended. `pending`: tried again at `next_attempt_at` (with the payload it sent, when it built one). */
export type WebhookSettlement =
  | { state: 'delivered'; at: number }
  | { state: 'dead'; at: number; error: string }
  /** `untried`: the claim sent nothing (the sender cannot send it, or closed first), so its attempt is not counted. */
  | { state: 'pending'; next_attempt_at: number; error: string | null; payload?: string; untried?: boolean };

export interface WebhookOutboxStore {
  /** Writes deliveries; a row whose id exists already is left as it is. */
  enqueueWebhookDeliveries(rows: readonly NewWebhookDelivery[]): Promise<void>;
  /**
   * Claims up to `limit` due rows (pending, `next_attempt_at` passed, no live
   * claim, no earlier pending row of the same subject and endpoint), oldest
   * due first: each claim is a compare-and-set that adds one to `attempts`,
   * so of several senders exactly one gets a row. Returns the rows as claimed.
   */
  claimWebhookDeliveries(claim: WebhookClaim): Promise<WebhookDelivery[]>;
  /**
   * Ends the claim `owner` took when the row's attempts were `attempts`;
   * false (nothing written) when that claim is no longer the row's.
   */
  settleWebhookDelivery(id: string, claim: { owner: string; attempts: number }, outcome: WebhookSettlement): Promise<boolean>;
  /** The earliest `next_attempt_at` after `now` among pending rows, or null: when a sender should look again. */
  nextWebhookAttemptAfter(now: number): Promise<number | null>;
  /** Deliveries oldest first, all or one subject's. */
  listWebhookDeliveries(query: { subject?: string; limit: number }): Promise<WebhookDelivery[]>;
  /** Deletes up to `limit` delivered or dead rows that ended at or before `before`; returns how many. */
  deleteEndedWebhookDeliveries(before: number, limit: number): Promise<number>;
}
