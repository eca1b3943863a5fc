// Range header parsing against RFC 9110's cases.
import { describe, expect, it } from 'vitest';
import { parseRange } from '../core/http/range.ts';

describe('parseRange', () => {
  it.each([
    [null, 10, { kind: 'full' }],
    ['bytes=0-4', 10, { kind: 'partial', range: { start: 0, end: 4 } }],
    ['bytes=5-', 10, { kind: 'partial', range: { start: 5, end: 9 } }],
    ['bytes=-3', 10, { kind: 'partial', range: { start: 7, end: 9 } }],
    ['bytes=-30', 10, { kind: 'partial', range: { start: 0, end: 9 } }],
    ['bytes=8-100', 10, { kind: 'partial', range: { start: 8, end: 9 } }],
    ['bytes=9-9', 10, { kind: 'partial', range: { start: 9, end: 9 } }],
    ['BYTES = 1-2', 10, { kind: 'partial', range: { start: 1, end: 2 } }],
    ['bytes=10-', 10, { kind: 'unsatisfiable' }],
    ['bytes=5-2', 10, { kind: 'unsatisfiable' }],
    ['bytes=-0', 10, { kind: 'unsatisfiable' }],
    ['bytes=0-0', 0, { kind: 'unsatisfiable' }],
    ['bytes=abc', 10, { kind: 'unsatisfiable' }],
    ['bytes=-', 10, { kind: 'unsatisfiable' }],
    ['nonsense', 10, { kind: 'unsatisfiable' }],
    ['items=0-4', 10, { kind: 'full' }],
    ['bytes=0-1, 4-5', 10, { kind: 'full' }],
    ['bytes=0-1, x', 10, { kind: 'unsatisfiable' }],
  ])('%s of %i bytes', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});
