// The node registry and the LRU cache the local engine is built on.
import { describe, expect, it } from 'vitest';
import { defineNode } from '../../engine/local/define-node.ts';
import { createLruCache } from '../../engine/local/lru-cache.ts';
import { createRegistry } from '../../engine/local/registry.ts';

const node = (name: string) => defineNode({ name, category: 'test', run: () => ({ outputs: [] }) });

describe('createRegistry', () => {
  it('finds nodes by class name and lists definitions as object_info', () => {
    const a = node('A');
    const registry = createRegistry([a, node('B')]);
    expect(registry.get('A')).toBe(a);
    expect(registry.get('C')).toBeUndefined();
    expect(Object.keys(registry.definitions())).toEqual(['A', 'B']);
    expect(registry.definitions().A).toBe(a.definition);
    expect(registry.list()).toHaveLength(2);
  });

  it('refuses two classes of one name', () => {
    expect(() => createRegistry([node('A'), node('A')])).toThrow(/duplicate node class: A/);
  });
});

describe('createLruCache', () => {
  it('evicts the least recently used entry beyond its capacity', () => {
    const cache = createLruCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recent
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('keeps nothing with capacity 0 and refuses a bad capacity', () => {
    const cache = createLruCache<number>(0);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
    expect(() => createLruCache(-1)).toThrow(RangeError);
  });
});
