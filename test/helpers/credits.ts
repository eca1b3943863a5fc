// A credits provider for the partner-node tests: every account has credits,
// every charge is recorded, and a test can make the account unable to pay.
import type { CreditsProvider } from '../../core/jobs/credits.ts';

export interface RecordingCredits {
  /** For ServiceOptions.credits. */
  provider: CreditsProvider;
  /** Every charge asked for, as [account, amount, what], refused or not. */
  charges: Array<[string, number, string]>;
  /** Runs `fn` with every charge refused, as for an account that cannot pay. */
  unpaid<T>(fn: () => Promise<T>): Promise<T>;
}

export function recordingCredits(): RecordingCredits {
  const charges: Array<[string, number, string]> = [];
  let pay = true;
  return {
    provider: {
      hasCredits: async () => true,
      charge: async (account, amount, what) => {
        charges.push([account, amount, what]);
        return pay;
      },
    },
    charges,
    async unpaid(fn) {
      pay = false;
      try {
        return await fn();
      } finally {
        pay = true;
      }
    },
  };
}
