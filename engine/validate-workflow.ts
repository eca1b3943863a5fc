// Validates an API-format workflow against node definitions with the
// reference's semantics: shape and class checks fail the whole prompt; then
// only nodes an output node needs are checked, and each output stands or
// falls with them. Some outputs valid -> ok with those outputs (node_errors
// name the rest). Shared by every engine: the local one checks its own
// classes, the worker engine the definitions its engine servers report.

import { dict } from '../lib/dict.ts';
import { isRecord } from '../lib/is-record.ts';
import type { NodeDefinition, NodeErrors, ValidationIssue, ValidationResult, Workflow } from './types.ts';
import { checkNode } from './validate-node.ts';
import { findCycles, linksOf, upstreamOf } from './workflow-graph.ts';

/** The definition of a node class, or undefined when the engine has no such class. */
export type DefinitionOf = (classType: string) => NodeDefinition | undefined;

/** A ValidationResult whose ok side also carries the failed outputs' node_errors, as POST /prompt returns them. */
export type LocalValidationResult =
  | { ok: true; outputs: string[]; node_errors: Record<string, NodeErrors> }
  | Extract<ValidationResult, { ok: false }>;

const fail = (type: string, message: string, details = '', extra_info: Record<string, unknown> = {}, node_errors: Record<string, NodeErrors> = {}) =>
  ({ ok: false, error: { type, message, details, extra_info }, node_errors }) as const;

export function validateWorkflow(workflow: unknown, definitionOf: DefinitionOf): LocalValidationResult {
  if (!isRecord(workflow)) return fail('invalid_prompt', 'The prompt must be an object of nodes keyed by node id');
  for (const [id, node] of Object.entries(workflow)) {
    if (!isRecord(node) || typeof node.class_type !== 'string' || !isRecord(node.inputs)) {
      return fail('invalid_prompt', 'Cannot execute because a node is missing the class_type property or its inputs object.', `Node ID '#${id}'`, {
        node_id: id,
      });
    }
  }
  const wf = workflow as Workflow;
  for (const [id, node] of Object.entries(wf)) {
    if (!definitionOf(node.class_type)) {
      return fail('missing_node_type', `Node '${node.class_type}' not found. The custom node may not be installed.`, `Node ID '#${id}'`, {
        node_id: id,
        class_type: node.class_type,
        node_title: node._meta?.title ?? node.class_type,
      });
    }
  }
  const outputs = Object.keys(wf).filter((id) => definitionOf(wf[id].class_type)!.output_node);
  if (outputs.length === 0) return fail('prompt_no_outputs', 'Prompt has no outputs');

  const sources = (id: string) => linksOf(wf, id, definitionOf(wf[id].class_type)!).map((l) => l.link[0]);
  const needs = new Map(outputs.map((o) => [o, upstreamOf(o, sources)]));
  const issues = new Map<string, ValidationIssue[]>();
  for (const set of needs.values()) for (const id of set) if (!issues.has(id)) issues.set(id, checkNode(wf, id, definitionOf));
  for (const cycle of findCycles(issues.keys(), sources)) {
    for (const id of cycle) issues.get(id)!.push(cycleIssue(wf, definitionOf, id, cycle));
  }

  const good = outputs.filter((o) => [...needs.get(o)!].every((id) => issues.get(id)!.length === 0));
  const node_errors = dict<NodeErrors>();
  for (const [id, errors] of issues) {
    if (errors.length === 0) continue;
    const dependent_outputs = outputs.filter((o) => needs.get(o)!.has(id));
    node_errors[id] = { errors, dependent_outputs, class_type: wf[id].class_type };
  }
  if (good.length === 0) {
    const details = Object.values(node_errors)
      .flatMap((n) => n.errors.map((e) => `${e.message}: ${e.details}`))
      .join('\n');
    return fail('prompt_outputs_failed_validation', 'Prompt outputs failed validation', details, {}, node_errors);
  }
  return { ok: true, outputs: good, node_errors };
}

/** Names the input through which the node depends on the rest of its cycle. */
function cycleIssue(wf: Workflow, definitionOf: DefinitionOf, id: string, cycle: string[]): ValidationIssue {
  const links = linksOf(wf, id, definitionOf(wf[id].class_type)!);
  const back = links.find((l) => cycle.includes(l.link[0]))!;
  return {
    type: 'dependency_cycle',
    message: 'Dependency cycle detected',
    details: `${back.input_name}: nodes ${cycle.map((n) => `#${n}`).join(', ')} depend on each other`,
    extra_info: { input_name: back.input_name, linked_node: back.link, cycle },
  };
}
