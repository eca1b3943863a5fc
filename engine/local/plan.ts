// Turns a validated workflow into the order its nodes run in and each node's
// cache key. The order is a depth-first post-order from the outputs (in their
// workflow order, inputs in declaration order): deterministic, every node
// after the nodes it links from, and each output finished as early as it can.

import { dict } from '../../lib/dict.ts';
import { stringifyJson } from '../../lib/json.ts';
import { sha256Hex } from '../../lib/sha256.ts';
import type { Workflow } from '../types.ts';
import { declaredInputs, type Link, readInput } from '../workflow-graph.ts';
import type { LocalNode } from './define-node.ts';
import type { NodeRegistry } from './registry.ts';

export type PlannedInput = { link: Link } | { value: unknown };

export interface PlannedNode {
  id: string;
  class_type: string;
  node: LocalNode;
  /** Declared inputs present in the workflow; constants already unwrapped. */
  inputs: Record<string, PlannedInput>;
  /** Same class, constants and upstream keys -> same key, whatever the node ids. */
  cache_key: string;
  /** False when this node or anything upstream of it is non-cacheable. */
  cacheable: boolean;
}

export class DependencyCycleError extends Error {
  override name = 'DependencyCycleError';
  constructor(readonly node_ids: string[]) {
    super(`Dependency cycle detected among nodes ${node_ids.join(', ')}`);
  }
}

export async function planExecution(workflow: Workflow, registry: NodeRegistry, outputs: string[]): Promise<PlannedNode[]> {
  const order: PlannedNode[] = [];
  const byId = new Map<string, PlannedNode>();
  // Depth first from each output, upstream nodes before the nodes they feed, on a stack of
  // its own (a chain of any length cannot overflow the call stack); `path` is the walk's current branch.
  const path: Array<{ id: string; node: LocalNode; inputs: Record<string, PlannedInput>; links: Array<[string, number]> }> = [];
  const onPath = new Set<string>();
  const enter = (id: string) => {
    if (onPath.has(id)) throw new DependencyCycleError([...path.slice(path.findIndex((f) => f.id === id)).map((f) => f.id)]);
    const node = Object.hasOwn(workflow, id) ? registry.get(workflow[id].class_type) : undefined;
    if (!node) throw new Error(`node #${id} is missing or of an unknown class; validate the workflow first`);
    const inputs = dict<PlannedInput>();
    const links: Array<[string, number]> = [];
    for (const { name } of declaredInputs(node.definition)) {
      const raw = workflow[id].inputs[name];
      if (raw === undefined) continue;
      const value = readInput(raw);
      if (value.kind === 'link') links.push(value.link);
      inputs[name] = value.kind === 'link' ? { link: value.link } : { value: value.kind === 'constant' ? value.value : raw };
    }
    // Visited in input order, as the walk always went.
    links.reverse();
    path.push({ id, node, inputs, links });
    onPath.add(id);
  };
  for (const output of outputs) {
    if (!byId.has(output)) enter(output);
    while (path.length > 0) {
      const frame = path[path.length - 1];
      const link = frame.links.pop();
      if (link !== undefined) {
        if (!byId.has(link[0])) enter(link[0]);
        continue;
      }
      path.pop();
      onPath.delete(frame.id);
      const planned: PlannedNode = {
        id: frame.id,
        class_type: workflow[frame.id].class_type,
        node: frame.node,
        inputs: frame.inputs,
        cache_key: '',
        cacheable: true,
      };
      byId.set(frame.id, planned);
      order.push(planned);
    }
  }
  // Keys in run order, so every upstream key is known when a node's is made.
  for (const p of order) {
    const parts = dict<unknown>();
    for (const [name, input] of Object.entries(p.inputs)) {
      if ('link' in input) {
        const source = byId.get(input.link[0])!;
        p.cacheable &&= source.cacheable;
        parts[name] = { key: source.cache_key, output: input.link[1] };
      } else {
        parts[name] = { value: input.value };
      }
    }
    p.cacheable &&= p.node.cacheable;
    // A fresh token makes the key unique; downstream keys embed it, so they are unique too.
    // A digest keeps keys short: nested upstream keys would otherwise grow with the graph's depth.
    const token = p.node.cacheable ? null : crypto.randomUUID();
    p.cache_key = await sha256Hex(canonicalJson({ class_type: p.class_type, inputs: parts, token }));
  }
  return order;
}

/** JSON with object keys sorted, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  // Loops that append, not entries/filter/map/join: every node of every job is keyed twice
  // (the memory check's twins, then the plan), so the arrays those make are most of its cost.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${canonicalJson(value[i] ?? null)}`;
    return `${out}]`;
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    let out = '{';
    // sort() with no comparator orders strings by UTF-16 code units, as `<` does.
    for (const key of Object.keys(record).sort()) {
      const v = record[key];
      if (v === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
    }
    return `${out}}`;
  }
  return stringifyJson(value) ?? 'null';
}
