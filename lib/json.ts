// JSON that keeps integers beyond 2^53 exact. Workflows carry seeds up to
// 2^64 - 1 (the engine server advertises 18446744073709551615 as a maximum),
// which JSON.parse would round to another seed and so another image. Such an
// integer is read as a BigInt and written back as the same digits; every other
// value is what JSON.parse and JSON.stringify give. Both take the native path
// unless the text or the value holds such an integer, so ordinary bodies cost
// what they did.
import { isInteger, isSafeNumber, parse, stringify } from 'lossless-json';

// Every integer that a double cannot hold has at least 16 digits.
const LONG_DIGITS = /\d{16}/;

const parseNumber = (digits: string): number | bigint => (isInteger(digits) && !isSafeNumber(digits) ? BigInt(digits) : Number(digits));

// As JSON.parse does: the last of duplicate keys wins.
const lastWins = ({ newValue }: { newValue: unknown }) => newValue;

/** JSON.parse, with integers beyond Number.MAX_SAFE_INTEGER as BigInt. Throws SyntaxError as JSON.parse does. */
export function parseJson(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  try {
    return parse(text, null, { parseNumber, onDuplicateKey: lastWins });
  } catch (err) {
    throw new SyntaxError(err instanceof Error ? err.message : String(err));
  }
}

/**
 * JSON.stringify (no replacer, no indent), writing a BigInt as its digits.
 * Typed as JSON.stringify is: undefined, a function or a symbol gives undefined.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    // JSON.stringify refuses a BigInt anywhere in the value; a cycle is refused the same way again below.
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
    return stringify(value) as string;
  }
}
