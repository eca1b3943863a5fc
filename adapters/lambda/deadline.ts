// An abort signal for the Request that fires before Lambda ends the
// invocation: a live stream (SSE) then closes cleanly with what it sent,
// instead of the function being cut off mid-write.
import type { LambdaContextLike } from './types.ts';

export interface DeadlineOptions {
  /** Longest a request may run, ms (e.g. under an API Gateway integration timeout). */
  timeoutMs?: number;
  /** Time kept back before the invocation's own deadline, ms. Default 1000. */
  deadlineMarginMs?: number;
}

export class DeadlineError extends Error {
  override name = 'DeadlineError';
}

export function deadlineSignal(context: LambdaContextLike | undefined, opts: DeadlineOptions): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const remaining = typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined;
  const limits = [opts.timeoutMs, remaining === undefined ? undefined : remaining - (opts.deadlineMarginMs ?? 1000)];
  const ms = Math.min(...limits.filter((n): n is number => typeof n === 'number' && Number.isFinite(n)));
  if (!Number.isFinite(ms)) return { signal: controller.signal, clear() {} };
  const timer = setTimeout(() => controller.abort(new DeadlineError('The invocation is about to reach its deadline.')), Math.max(0, ms));
  (timer as { unref?: () => void }).unref?.();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
