// Reading an API-format workflow as a graph: which input values are links and
// which are constants (`{"__value__": x}` unwrapped), the links of a node's
// declared inputs, what an output needs, and the cycles among a set of nodes.
// Validation and planning both read workflows through here, so they agree.
import { isRecord } from '../lib/is-record.ts';
import type { InputSpec, NodeDefinition, Workflow } from './types.ts';

export type Link = [source_id: string, output_index: number];

export type InputValue = { kind: 'link'; link: Link } | { kind: 'bad_link'; value: unknown[] } | { kind: 'constant'; value: unknown };

/** Any array is a link (as in the reference); list constants come wrapped in `__value__`. */
export function readInput(value: unknown): InputValue {
  if (Array.isArray(value)) {
    const [id, index] = value as unknown[];
    if (value.length === 2 && typeof id === 'string' && Number.isInteger(index) && (index as number) >= 0) {
      return { kind: 'link', link: [id, index as number] };
    }
    return { kind: 'bad_link', value };
  }
  if (isRecord(value) && '__value__' in value) return { kind: 'constant', value: value.__value__ };
  return { kind: 'constant', value };
}

export interface DeclaredInput {
  name: string;
  spec: InputSpec;
  required: boolean;
}

/** Required then optional inputs in declaration order; hidden inputs are the engine's, not the graph's. */
export function declaredInputs(def: NodeDefinition): DeclaredInput[] {
  const required = Object.entries(def.input.required).map(([name, spec]) => ({ name, spec, required: true }));
  const optional = Object.entries(def.input.optional ?? {}).map(([name, spec]) => ({ name, spec, required: false }));
  return [...required, ...optional];
}

/** Well-formed links of a node's declared inputs; undeclared inputs are ignored like the reference does. */
export function linksOf(workflow: Workflow, id: string, def: NodeDefinition): Array<{ input_name: string; link: Link }> {
  const out: Array<{ input_name: string; link: Link }> = [];
  for (const { name } of declaredInputs(def)) {
    const value = readInput(workflow[id].inputs[name]);
    if (value.kind === 'link' && Object.hasOwn(workflow, value.link[0])) out.push({ input_name: name, link: value.link });
  }
  return out;
}

/** The node itself and every node it depends on through links. */
export function upstreamOf(start: string, sources: (id: string) => string[]): Set<string> {
  const seen = new Set<string>([start]);
  const stack = [start];
  while (stack.length > 0) {
    for (const next of sources(stack.pop()!)) {
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return seen;
}

/**
 * Cycles as strongly connected components (Tarjan): groups of two or more
 * nodes, or one node linked to itself. Walked with a stack of its own, not
 * the call stack, so a chain of any length cannot overflow it.
 */
export function findCycles(ids: Iterable<string>, sources: (id: string) => string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const root of ids) {
    if (index.has(root)) continue;
    // Each frame: a node and the iterator over its sources, resumed after each child.
    const frames: Array<{ v: string; next: Iterator<string> }> = [];
    const enter = (v: string) => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      onStack.add(v);
      frames.push({ v, next: sources(v)[Symbol.iterator]() });
    };
    enter(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const step = frame.next.next();
      if (!step.done) {
        const w = step.value;
        if (!index.has(w)) enter(w);
        else if (onStack.has(w)) low.set(frame.v, Math.min(low.get(frame.v)!, index.get(w)!));
        continue;
      }
      frames.pop();
      const v = frame.v;
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(v)!));
      if (low.get(v) !== index.get(v)) continue;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || sources(v).includes(v)) cycles.push(component.reverse());
    }
  }
  return cycles;
}
