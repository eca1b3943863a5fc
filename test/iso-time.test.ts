// core/iso-time.ts: instants written as Date#toISOString writes them, for
// every millisecond a stored record can hold and past those bounds.
import { describe, expect, it } from 'vitest';
import { isoTime, isoTimeOrNull } from '../core/iso-time.ts';

const viaDate = (ms: number) => new Date(ms).toISOString();

describe('isoTime', () => {
  it('writes what toISOString writes at the edges of days, months, leap years and centuries', () => {
    const cases = [0, 1, 999, 59_999, 3_599_999, 86_399_999, 86_400_000, Date.parse('2000-02-29T12:00:00Z'), 253402300799999];
    for (const year of [1970, 1972, 1999, 2000, 2024, 2038, 2100, 2400, 9999]) {
      for (let month = 0; month < 12; month++) {
        for (const day of [1, 28, 29, 30, 31]) cases.push(Date.UTC(year, month, day), Date.UTC(year, month, day, 23, 59, 59, 999));
      }
    }
    for (const ms of cases) expect(isoTime(ms), String(ms)).toBe(viaDate(ms));
  });

  it('writes what toISOString writes for instants spread over the four-digit years', () => {
    // A fixed spread (no randomness): a prime stride through 1970..9999.
    for (let ms = 12_345; ms <= 253402300799999; ms += 2_718_281_828_459) expect(isoTime(ms), String(ms)).toBe(viaDate(ms));
  });

  it('leaves what is not a whole millisecond from 1970 to 9999 to toISOString, and its errors too', () => {
    for (const ms of [-1, -86_400_001, 253402300800000, 8.64e15, 1.5]) expect(isoTime(ms)).toBe(viaDate(ms));
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(isoTimeOrNull(null)).toBeNull();
    expect(isoTimeOrNull(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});
