// Integer query parameters of the cloud surface's listings: absent means the
// default, anything but a whole number within bounds is a 400 naming it
// (or, where the bounds say so, a number above the maximum is the maximum).
import { invalid } from '../errors.ts';

export function intParam(url: URL, name: string, bounds: { min: number; max: number; fallback: number; clampMax?: boolean }): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return bounds.fallback;
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (bounds.clampMax && n > bounds.max) return bounds.max;
  if (!Number.isSafeInteger(n) || n < bounds.min || n > bounds.max) {
    throw invalid(`${name}: must be a whole number from ${bounds.min} to ${bounds.max}`, name, 'out of range');
  }
  return n;
}

/** One of `allowed`, or the fallback when absent. */
export function enumParam<T extends string>(url: URL, name: string, allowed: readonly T[], fallback: T): T {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw invalid(`${name}: must be one of ${allowed.join(', ')}`, name, 'not allowed');
  return raw as T;
}
