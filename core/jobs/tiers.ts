// Parallel-job limits per subscription tier. The contract leaves the numbers
// open ("depends on subscription tier"), so these are defaults an operator
// overrides; an account whose tier has no entry (the stores' own 'default'
// included) gets the limit of the fallback tier.

export const DEFAULT_TIER_LIMITS: Readonly<Record<string, number>> = {
  free: 1,
  standard: 1,
  creator: 3,
  pro: 5,
};

export const FALLBACK_TIER = 'free';

export interface TierLimits {
  /** Running jobs an account of this tier may have at once (at least 0). */
  limitOf(tier: string): number;
}

/**
 * Merges configured limits over the defaults. `fallbackTier` names the tier
 * whose limit unknown tiers get; if it has no entry either, the limit is 1.
 */
export function createTierLimits(configured: Record<string, number> = {}, fallbackTier = FALLBACK_TIER): TierLimits {
  const limits = new Map(Object.entries({ ...DEFAULT_TIER_LIMITS, ...configured }));
  for (const [tier, n] of limits) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`tier limit for '${tier}' must be a non-negative integer, got ${n}`);
  }
  const fallback = limits.get(fallbackTier) ?? 1;
  return { limitOf: (tier) => limits.get(tier) ?? fallback };
}
