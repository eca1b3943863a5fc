// The job's memory budget at validation: the nodes a valid workflow will run
// are walked in run order with what is known ahead (constants, and what the
// upstream estimates say: an EmptyImage's shape, a primitive's value), each
// node's estimate added to what the results before it hold, as the run would
// hold them. The first node that cannot fit refuses the workflow, named with
// its input, the way an out-of-range value is. What depends on a size known
// only at run time (a loaded image) is checked then (memory-budget.ts).
import { dict } from '../../lib/dict.ts';
import type { NodeErrors, ValidationIssue, Workflow } from '../types.ts';
import type { LocalValidationResult } from '../validate-workflow.ts';
import { declaredInputs, linksOf, readInput, upstreamOf } from '../workflow-graph.ts';
import { estimateOf, nodeLabel, overBudgetMessage } from './memory-budget.ts';
import { canonicalJson } from './plan.ts';
import type { NodeRegistry } from './registry.ts';

export function checkMemory(workflow: Workflow, registry: NodeRegistry, checked: LocalValidationResult, maxBytes: number): LocalValidationResult {
  if (!checked.ok) return checked;
  const sources = (id: string) => linksOf(workflow, id, registry.definitionOf(workflow[id].class_type)!).map((l) => l.link[0]);
  const known = new Map<string, unknown[] | undefined>();
  // Twins (same class, constants and upstream) run once, as the engine serves the second from the first.
  const keyOf = new Map<string, number>();
  const keys = new Map<string, number>();
  const counted = new Set<number>();
  let held = 0;
  for (const id of runOrder(checked.outputs, sources)) {
    const node = registry.get(workflow[id].class_type)!;
    const inputs = dict<unknown>();
    const parts = dict<unknown>();
    for (const { name } of declaredInputs(node.definition)) {
      const raw = workflow[id].inputs[name];
      if (raw === undefined) continue;
      const value = readInput(raw);
      if (value.kind === 'link') {
        inputs[name] = known.get(value.link[0])?.[value.link[1]];
        parts[name] = [keys.get(value.link[0]), value.link[1]];
      } else if (value.kind === 'constant') {
        inputs[name] = value.value;
        parts[name] = { value: value.value };
      }
    }
    const text = canonicalJson({ class_type: workflow[id].class_type, inputs: parts, token: node.cacheable ? null : id });
    if (!keyOf.has(text)) keyOf.set(text, keyOf.size);
    const key = keyOf.get(text)!;
    keys.set(id, key);
    const estimate = estimateOf(node.memory, inputs);
    known.set(id, estimate?.outputs);
    if (!estimate || counted.has(key)) continue;
    counted.add(key);
    if (held + estimate.bytes + (estimate.scratch ?? 0) > maxBytes) {
      const input = estimate.input ?? '';
      const issue: ValidationIssue = {
        type: 'memory_budget_exceeded',
        message: overBudgetMessage(estimate, held, maxBytes),
        details: input,
        extra_info: { input_name: input || null, bytes_needed: estimate.bytes + (estimate.scratch ?? 0), bytes_held: held, budget_bytes: maxBytes },
      };
      const dependent_outputs = checked.outputs.filter((o) => upstreamOf(o, sources).has(id));
      const node_errors = dict<NodeErrors>();
      node_errors[id] = { errors: [issue], dependent_outputs, class_type: workflow[id].class_type };
      const details = `${nodeLabel(id, workflow[id].class_type, input)}: ${issue.message}`;
      return {
        ok: false,
        error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', details, extra_info: {} },
        node_errors,
      };
    }
    held += estimate.bytes;
  }
  return checked;
}

/** Every node the outputs need, each after the nodes it links from, walked on a stack of its own. */
function runOrder(outputs: string[], sources: (id: string) => string[]): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  for (const output of outputs) {
    const stack: Array<[id: string, expanded: boolean]> = [[output, false]];
    while (stack.length > 0) {
      const [id, expanded] = stack.pop()!;
      if (expanded) {
        order.push(id);
        continue;
      }
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push([id, true]);
      for (const source of sources(id).reverse()) if (!seen.has(source)) stack.push([source, false]);
    }
  }
  return order;
}
