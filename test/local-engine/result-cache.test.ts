// The local engine's cross-job result cache: least recently used first,
// bounded in entries and in bytes.
import { describe, expect, it } from 'vitest';
import type { NodeResult } from '../../engine/local/define-node.ts';
import { createResultCache, resultBytes } from '../../engine/local/result-cache.ts';

const n = (value: number): NodeResult => ({ outputs: [value] });
const floats = (count: number): NodeResult => ({ outputs: [{ width: 1, height: 1, count: 1, data: new Float32Array(count) }] });

describe('createResultCache', () => {
  it('evicts the least recently used entry beyond its entry limit', () => {
    const cache = createResultCache({ entries: 2, bytes: Infinity });
    cache.set('a', n(1));
    cache.set('b', n(2));
    expect(cache.get('a')).toEqual(n(1)); // a is now the most recent
    cache.set('c', n(3));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual(n(1));
    expect(cache.get('c')).toEqual(n(3));
    expect(cache.size).toBe(2);
  });

  it('evicts by bytes: large results push out the least recently used ones', () => {
    const cache = createResultCache({ entries: 100, bytes: 10_000 });
    cache.set('a', floats(1000)); // 4000 bytes of data
    cache.set('b', floats(1000));
    expect(cache.bytes).toBeGreaterThanOrEqual(8000);
    cache.get('a');
    cache.set('c', floats(1000));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
  });

  it('does not keep a result larger than the whole budget, nor evict others for it', () => {
    const cache = createResultCache({ entries: 100, bytes: 10_000 });
    cache.set('a', floats(100));
    cache.set('huge', floats(10_000));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
  });

  it('keeps nothing with 0 entries and refuses a bad limit', () => {
    const cache = createResultCache({ entries: 0, bytes: Infinity });
    cache.set('a', n(1));
    expect(cache.get('a')).toBeUndefined();
    expect(() => createResultCache({ entries: -1, bytes: 1 })).toThrow(RangeError);
    expect(() => createResultCache({ entries: 1, bytes: 1.5 })).toThrow(RangeError);
  });

  it('counts a buffer shared by two views once', () => {
    const data = new Float32Array(1000);
    const one = resultBytes({ outputs: [{ data }] });
    const two = resultBytes({ outputs: [{ data }, { data: data.subarray(10) }] });
    expect(one).toBeGreaterThanOrEqual(4000);
    expect(two - one).toBeLessThan(100);
  });
});
