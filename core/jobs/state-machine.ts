// The job lifecycle as one transition table. Every persisted move goes through
// `transition`, and storage applies it as compare-and-set on the current
// status, so two instances can never both move the same job.

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceling', 'canceled', 'expired'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * `requeue` is recovery only: a job whose instance died while running it goes
 * back to the queue to run again (the engine's work is lost with the process).
 */
export type JobEvent = 'start' | 'succeed' | 'fail' | 'cancel' | 'canceled' | 'expire' | 'requeue';

/** from -> event -> to. Anything absent is an illegal move. */
export const TRANSITIONS: Readonly<Record<JobStatus, Partial<Record<JobEvent, JobStatus>>>> = {
  // `fail` from queued: its retention ran out before it could start.
  queued: { start: 'running', cancel: 'canceled', fail: 'failed' },
  running: { succeed: 'succeeded', fail: 'failed', cancel: 'canceling', requeue: 'queued' },
  canceling: { canceled: 'canceled', fail: 'failed', succeed: 'succeeded' },
  succeeded: { expire: 'expired' },
  failed: { expire: 'expired' },
  canceled: { expire: 'expired' },
  expired: {},
};

export const TERMINAL: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'canceled', 'expired']);

export const isTerminal = (status: JobStatus) => TERMINAL.has(status);

export class IllegalTransitionError extends Error {
  override name = 'IllegalTransitionError';
  constructor(
    readonly from: JobStatus,
    readonly event: JobEvent,
  ) {
    super(`a ${from} job cannot ${event}`);
  }
}

/** The status after `event`, or an IllegalTransitionError. */
export function transition(from: JobStatus, event: JobEvent): JobStatus {
  const to = TRANSITIONS[from][event];
  if (to === undefined) throw new IllegalTransitionError(from, event);
  return to;
}

export function canTransition(from: JobStatus, event: JobEvent): boolean {
  return TRANSITIONS[from][event] !== undefined;
}
