// Multi-frame video tasks (the /proxy/videogen surface): durable records a
// restart resumes, each state change a compare-and-set as for jobs.

import type { NewWebhookDelivery } from './webhook-outbox-store.ts';

/**
 * A multi-frame video task (POST /proxy/videogen/multiframe). Times are epoch
 * ms; `request` holds the validated request fields as the record shows them.
 */
export interface VideoTaskRecord {
  id: string;
  account_id: string;
  /** created, queueing, processing, success or failed (core/proxy/video/states.ts). */
  state: string;
  request: Record<string, unknown>;
  credits: number;
  /** The provider's name and its id for the task, once it has one. */
  provider: string;
  provider_task_id: string | null;
  /** Origin and mount prefix the links of the record start with (deliveries have no request). */
  link_base: string;
  output_asset_id: string | null;
  /** The error body of a failed task, or null. */
  error: Record<string, unknown> | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

export interface VideoTaskPatch {
  provider_task_id?: string | null;
  output_asset_id?: string | null;
  error?: Record<string, unknown> | null;
  updated_at: number;
  /** Deliveries announcing the change (its callback), written in the same transaction, only when the change happens. */
  outbox?: readonly NewWebhookDelivery[];
}

/** Video task persistence: every state change is a compare-and-set on the current state. */
export interface VideoTaskStore {
  createVideoTask(task: VideoTaskRecord): Promise<void>;
  /** The account's task, or null (another account's task is null too). */
  getVideoTask(accountId: string, id: string): Promise<VideoTaskRecord | null>;
  /** Moves the task from `from` to `to` (they may be equal) only if it is still in `from`; false otherwise. */
  transitionVideoTask(id: string, from: string, to: string, patch: VideoTaskPatch): Promise<boolean>;
  /** Tasks in these states, oldest first (the ones a restart resumes). */
  listVideoTasksByState(states: string[], limit: number): Promise<VideoTaskRecord[]>;
  /** Deletes up to `limit` tasks whose retention ended at or before `now`; returns their ids. */
  deleteExpiredVideoTasks(now: number, limit: number): Promise<string[]>;
}
