// A per-account count of things held open (event streams, generations under
// way) with a ceiling: a slot is taken or refused at once, and given back
// exactly once however often its release is called.

export interface AccountSlots {
  /** A release function, or null when the account holds `max` already. */
  tryAcquire(accountId: string): (() => void) | null;
  /** Slots the account holds now. */
  count(accountId: string): number;
}

export function createAccountSlots(max: number): AccountSlots {
  const held = new Map<string, number>();
  return {
    tryAcquire(accountId) {
      const n = held.get(accountId) ?? 0;
      if (n >= max) return null;
      held.set(accountId, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (held.get(accountId) ?? 1) - 1;
        if (left > 0) held.set(accountId, left);
        else held.delete(accountId);
      };
    },
    count: (accountId) => held.get(accountId) ?? 0,
  };
}
