// The arithmetic of the graphrun.Math* nodes. Division and modulo follow
// Python (floor division, result of modulo takes the divisor's sign) so
// results match what users of the reference expect; by zero is an error.
export const MATH_OPS = ['add', 'subtract', 'multiply', 'divide', 'modulo', 'min', 'max'] as const;

export class ZeroDivisionError extends Error {
  override name = 'ZeroDivisionError';
}

function apply(a: number, b: number, op: string, intDivide: boolean): number {
  switch (op) {
    case 'add':
      return a + b;
    case 'subtract':
      return a - b;
    case 'multiply':
      return a * b;
    case 'min':
      return Math.min(a, b);
    case 'max':
      return Math.max(a, b);
  }
  if (b === 0) throw new ZeroDivisionError(`${op} by zero`);
  if (op === 'divide') return intDivide ? Math.floor(a / b) : a / b;
  if (op === 'modulo') return a - b * Math.floor(a / b);
  throw new RangeError(`unknown op: ${op}`);
}

export function mathInt(a: number, b: number, op: string): number {
  const r = apply(a, b, op, true);
  // Beyond 2^53 an INT is no longer exact; say so instead of returning a rounded value.
  if (!Number.isSafeInteger(r)) throw new RangeError(`${op} overflows the INT range`);
  return r;
}

export function mathFloat(a: number, b: number, op: string): number {
  const r = apply(a, b, op, false);
  if (!Number.isFinite(r)) throw new RangeError(`${op} result is not finite`);
  return r;
}
