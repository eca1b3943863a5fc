// Music generations under way per account: each holds a slot from its
// headers until its stream ends, and an account at its limit gets 429.
import { createAccountSlots } from '../../account-slots.ts';

export interface GenerationLimiter {
  /** A release function, or null when the account is at its limit. */
  acquire(accountId: string): (() => void) | null;
  running(accountId: string): number;
}

export function createGenerationLimiter(perAccount: number): GenerationLimiter {
  const slots = createAccountSlots(perAccount);
  return { acquire: slots.tryAcquire, running: slots.count };
}
