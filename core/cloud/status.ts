// The cloud surface's job statuses, mapped from the one state machine:
// queued -> pending, running and canceling -> in_progress, succeeded ->
// completed, failed -> failed, canceled -> cancelled. An expired job is gone
// (404), as on v2.
import type { JobStatus } from '../jobs/state-machine.ts';

export const CLOUD_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'cancelled'] as const;
export type CloudStatus = (typeof CLOUD_STATUSES)[number];

const TO_CLOUD: Record<Exclude<JobStatus, 'expired'>, CloudStatus> = {
  queued: 'pending',
  running: 'in_progress',
  canceling: 'in_progress',
  succeeded: 'completed',
  failed: 'failed',
  canceled: 'cancelled',
};

export function cloudStatus(status: string): CloudStatus {
  const mapped = TO_CLOUD[status as keyof typeof TO_CLOUD];
  if (!mapped) throw new Error(`job status ${status} has no cloud status`);
  return mapped;
}

/** The state-machine statuses behind cloud statuses. */
export function jobStatusesOf(statuses: readonly CloudStatus[]): string[] {
  return Object.entries(TO_CLOUD)
    .filter(([, cloud]) => statuses.includes(cloud))
    .map(([status]) => status);
}

/** What GET /queue shows and interrupt stops. */
export const RUNNING_STATUSES = jobStatusesOf(['in_progress']);
/** Finished and still retained: history. */
export const FINISHED_STATUSES = jobStatusesOf(['completed', 'failed', 'cancelled']);
/** Everything a listing shows. */
export const VISIBLE_STATUSES = jobStatusesOf(CLOUD_STATUSES);
