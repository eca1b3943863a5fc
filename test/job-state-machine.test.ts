// Every (status, event) pair against the lifecycle of the contract: legal
// moves land where the table says, every other move is refused.
import { describe, expect, it } from 'vitest';
import {
  canTransition,
  IllegalTransitionError,
  isTerminal,
  JOB_STATUSES,
  type JobEvent,
  type JobStatus,
  transition,
} from '../core/jobs/state-machine.ts';

const EVENTS: JobEvent[] = ['start', 'succeed', 'fail', 'cancel', 'canceled', 'expire', 'requeue'];

const LEGAL: Array<[JobStatus, JobEvent, JobStatus]> = [
  ['queued', 'start', 'running'],
  ['queued', 'cancel', 'canceled'],
  // Retention ran out while it waited: it fails without running.
  ['queued', 'fail', 'failed'],
  ['running', 'succeed', 'succeeded'],
  ['running', 'fail', 'failed'],
  ['running', 'cancel', 'canceling'],
  // Recovery after a crash: the interrupted run starts over.
  ['running', 'requeue', 'queued'],
  // A cancel that arrives as the job finishes: whichever the engine reports wins.
  ['canceling', 'canceled', 'canceled'],
  ['canceling', 'succeed', 'succeeded'],
  ['canceling', 'fail', 'failed'],
  ['succeeded', 'expire', 'expired'],
  ['failed', 'expire', 'expired'],
  ['canceled', 'expire', 'expired'],
];

describe('job state machine', () => {
  it.each(LEGAL)('%s --%s--> %s', (from, event, to) => {
    expect(canTransition(from, event)).toBe(true);
    expect(transition(from, event)).toBe(to);
  });

  const illegal = JOB_STATUSES.flatMap((from) =>
    EVENTS.filter((event) => !LEGAL.some(([f, e]) => f === from && e === event)).map((event) => [from, event] as const),
  );

  it(`has exactly the legal moves above and refuses the other ${illegal.length}`, () => {
    expect(illegal.length + LEGAL.length).toBe(JOB_STATUSES.length * EVENTS.length);
  });

  it.each(illegal)('refuses %s --%s-->', (from, event) => {
    expect(canTransition(from, event)).toBe(false);
    expect(() => transition(from, event)).toThrow(IllegalTransitionError);
  });

  it('knows the terminal states', () => {
    expect(JOB_STATUSES.filter(isTerminal)).toEqual(['succeeded', 'failed', 'canceled', 'expired']);
  });
});
