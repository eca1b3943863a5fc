// The 429 `queue_full` answers: the whole queue is full, or one account has
// as many queued jobs as it may. The scheduler's early count (admit, before
// the body is read) and the insert's own (JobStore.createJob's bounds, the
// one instances racing on a shared database cannot overshoot) refuse alike,
// so a client cannot tell which of the two turned it away.
import type { QueueRefusal } from '../../storage/types.ts';
import { ApiError } from '../errors.ts';

export function queueFullError({ refused, queued, limit }: QueueRefusal, retryAfter: string): ApiError {
  const headers = { 'Retry-After': retryAfter };
  if (refused === 'queue') return new ApiError('queue_full', 'The job queue is full. Retry later.', undefined, headers);
  return new ApiError(
    'queue_full',
    `This account already has ${queued} queued jobs, the most it may have; retry once some have started.`,
    { queued, limit },
    headers,
  );
}
