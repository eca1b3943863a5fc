// Music generations under way per account: each holds a slot from its
// headers until its stream ends, and an account at its limit gets 429.
export interface GenerationLimiter {
  /** A release function, or null when the account is at its limit. */
  acquire(accountId: string): (() => void) | null;
  running(accountId: string): number;
}

export function createGenerationLimiter(perAccount: number): GenerationLimiter {
  const counts = new Map<string, number>();
  return {
    acquire(accountId) {
      const now = counts.get(accountId) ?? 0;
      if (now >= perAccount) return null;
      counts.set(accountId, now + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (counts.get(accountId) ?? 1) - 1;
        if (left <= 0) counts.delete(accountId);
        else counts.set(accountId, left);
      };
    },
    running: (accountId) => counts.get(accountId) ?? 0,
  };
}
