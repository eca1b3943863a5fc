// Credits are optional: an operator who bills per job plugs in a provider;
// without one every account is unlimited. Spending is the provider's business
// (it knows its ledger); the service only asks before it accepts a job.
import { ApiError } from '../errors.ts';

export interface CreditsProvider {
  /** True when the account may start another job; an account it does not meter is unlimited. */
  hasCredits(accountId: string): Promise<boolean>;
}

/** Throws 402 `insufficient_credits` when a provider is given and says no. */
export async function checkCredits(provider: CreditsProvider | undefined, accountId: string): Promise<void> {
  if (provider === undefined) return;
  if (!(await provider.hasCredits(accountId))) {
    throw new ApiError('insufficient_credits', 'The account has no credits left to run a job.');
  }
}
