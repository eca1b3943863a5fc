// Credits are optional: an operator who bills plugs in a provider; without
// one every account is unlimited. Spending is the provider's business (it
// knows its ledger): jobs only ask before they are accepted, the generation
// endpoints charge per request through `charge`.
import { ApiError } from '../errors.ts';

export interface CreditsProvider {
  /** True when the account may start another job; an account it does not meter is unlimited. */
  hasCredits(accountId: string): Promise<boolean>;
  /**
   * Takes `amount` credits from the account for `what` (e.g. "music generation");
   * false when it has not enough, and then nothing is taken. Without it,
   * charges only ask `hasCredits`.
   */
  charge?(accountId: string, amount: number, what: string): Promise<boolean>;
}

/** Throws 402 `insufficient_credits` when a provider is given and says no. */
export async function checkCredits(provider: CreditsProvider | undefined, accountId: string): Promise<void> {
  if (provider === undefined) return;
  if (!(await provider.hasCredits(accountId))) {
    throw new ApiError('insufficient_credits', 'The account has no credits left to run a job.');
  }
}

/** Whether the charge went through: always without a provider, else the provider's word. */
export async function chargeCredits(provider: CreditsProvider | undefined, accountId: string, amount: number, what: string): Promise<boolean> {
  if (provider === undefined) return true;
  if (provider.charge) return provider.charge(accountId, amount, what);
  return provider.hasCredits(accountId);
}
