// Execution planning: a deterministic dependency order, cycle detection, and
// cache keys that depend on what a node computes, not on its id.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, DependencyCycleError, planExecution } from '../../engine/local/plan.ts';
import { createRegistry } from '../../engine/local/registry.ts';
import type { Workflow } from '../../engine/types.ts';
import { createTestNodes, sumWorkflow } from '../helpers/local-nodes.ts';

const registry = createRegistry(createTestNodes().nodes);

const sum = sumWorkflow;
const keys = async (w: Workflow, outputs: string[]) =>
  Object.fromEntries((await planExecution(w, registry, outputs)).map((p) => [p.id, p.cache_key]));

describe('planExecution: order', () => {
  it('runs every node after the nodes it links from, outputs in workflow order', async () => {
    const w = { ...sum('a'), ...sum('b') };
    const order = (await planExecution(w, registry, ['a4', 'b4'])).map((p) => p.id);
    expect(order).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4']);
  });

  it('plans a shared node once', async () => {
    const w = sum('');
    w['5'] = { class_type: 'Show', inputs: { value: ['1', 0] } };
    expect((await planExecution(w, registry, ['5', '4'])).map((p) => p.id)).toEqual(['1', '5', '2', '3', '4']);
  });

  it('is the same for the same workflow, whatever its key order', async () => {
    const w = sum('');
    const reversed = Object.fromEntries(Object.entries(w).reverse());
    const ids = async (x: Workflow) => (await planExecution(x, registry, ['4'])).map((p) => p.id);
    expect(await ids(reversed)).toEqual(await ids(w));
  });

  it('unwraps constants and keeps links', async () => {
    const w = sum('');
    w['2'].inputs.value = { __value__: 9 };
    const plan = await planExecution(w, registry, ['4']);
    expect(plan.find((p) => p.id === '2')!.inputs).toEqual({ value: { value: 9 } });
    expect(plan.find((p) => p.id === '3')!.inputs).toEqual({ a: { link: ['1', 0] }, b: { link: ['2', 0] } });
  });

  it('throws DependencyCycleError naming the nodes of a cycle', async () => {
    const w = sum('');
    w['3'].inputs.a = ['5', 0];
    w['5'] = { class_type: 'Add', inputs: { a: ['3', 0], b: ['2', 0] } };
    const err = await planExecution(w, registry, ['4']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyCycleError);
    expect((err as DependencyCycleError).node_ids).toEqual(['3', '5']);
  });
});

describe('planExecution: cache keys', () => {
  it('are equal for identical subgraphs under different ids', async () => {
    const a = await keys(sum('a'), ['a4']);
    const b = await keys(sum('other-'), ['other-4']);
    expect(Object.values(a)).toEqual(Object.values(b));
    expect(new Set(Object.values(a)).size).toBe(4);
  });

  it('differ when a constant differs, and so do the keys downstream', async () => {
    const a = await keys(sum('', 3, 4), ['4']);
    const b = await keys(sum('', 3, 5), ['4']);
    expect(b['1']).toBe(a['1']);
    expect(b['2']).not.toBe(a['2']);
    expect(b['3']).not.toBe(a['3']);
    expect(b['4']).not.toBe(a['4']);
  });

  it('depend on which output of a source is linked', async () => {
    const w = (index: number): Workflow => ({
      '1': { class_type: 'Text', inputs: { text: 'hi', flag: true, mode: 'fast' } },
      '2': { class_type: 'ShowAny', inputs: { value: ['1', index] } },
    });
    expect((await keys(w(0), ['2']))['2']).not.toBe((await keys(w(1), ['2']))['2']);
  });

  it('do not depend on the key order of constants', async () => {
    const w1: Workflow = {
      '1': { class_type: 'Text', inputs: { text: 'a', flag: true, mode: 'fast' } },
      '2': { class_type: 'ShowAny', inputs: { value: ['1', 0] } },
    };
    const w2: Workflow = {
      '1': { class_type: 'Text', inputs: { mode: 'fast', flag: true, text: 'a' } },
      '2': { class_type: 'ShowAny', inputs: { value: ['1', 0] } },
    };
    expect(await keys(w1, ['2'])).toEqual(await keys(w2, ['2']));
  });

  it('are unique for a non-cacheable node and everything downstream of it', async () => {
    const w: Workflow = {
      '1': { class_type: 'Random', inputs: {} },
      '2': { class_type: 'Number', inputs: { value: 1 } },
      '3': { class_type: 'Add', inputs: { a: ['1', 0], b: ['2', 0] } },
      '4': { class_type: 'Show', inputs: { value: ['3', 0] } },
    };
    const [p1, p2] = [await planExecution(w, registry, ['4']), await planExecution(w, registry, ['4'])];
    expect(p1.map((p) => [p.id, p.cacheable])).toEqual([
      ['1', false],
      ['2', true],
      ['3', false],
      ['4', false],
    ]);
    for (const id of ['1', '3', '4']) expect(p1.find((p) => p.id === id)!.cache_key).not.toBe(p2.find((p) => p.id === id)!.cache_key);
    expect(p1.find((p) => p.id === '2')!.cache_key).toBe(p2.find((p) => p.id === '2')!.cache_key);
  });

  it("are the SHA-256 of the node's class and inputs, an upstream node by its key", async () => {
    const plan = await planExecution(sum(''), registry, ['4']);
    const key = (id: string) => plan.find((p) => p.id === id)!.cache_key;
    const digest = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');
    expect(key('1')).toBe(digest({ class_type: 'Number', inputs: { value: { value: 3 } }, token: null }));
    expect(key('3')).toBe(digest({ class_type: 'Add', inputs: { a: { key: key('1'), output: 0 }, b: { key: key('2'), output: 0 } }, token: null }));
  });
});

describe('canonicalJson', () => {
  it('sorts object keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe('{"a":{"d":[1,{"x":1,"y":2}]},"b":1}');
  });

  it('orders keys by UTF-16 code units (digits, capitals, then the rest), writes an absent array item as null, and keeps long integers', () => {
    const value = { é: 1, b: 2, B: 3, '10': 4, '9': 5, '': 6, list: [undefined, 'a"b', 18446744073709551615n] };
    expect(canonicalJson(value)).toBe('{"":6,"10":4,"9":5,"B":3,"b":2,"list":[null,"a\\"b",18446744073709551615],"é":1}');
  });
});
