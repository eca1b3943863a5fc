// The node registry the local engine is built on.
import { describe, expect, it } from 'vitest';
import { defineNode } from '../../engine/local/define-node.ts';
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
