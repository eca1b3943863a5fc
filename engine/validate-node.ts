// The checks of one node's inputs, in the reference's issue types and
// messages: missing required inputs, malformed or mistyped links, and
// constants of the wrong type or out of range. Whether upstream nodes are
// valid is decided by validate-workflow.ts, which sees the whole graph.

import { stringifyJson } from '../lib/json.ts';
import type { InputSpec, ValidationIssue, Workflow } from './types.ts';
import type { DefinitionOf } from './validate-workflow.ts';
import { declaredInputs, readInput } from './workflow-graph.ts';

type Issue = (type: string, message: string, details: string, extra: Record<string, unknown>) => void;

export function checkNode(workflow: Workflow, id: string, definitionOf: DefinitionOf): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const def = definitionOf(workflow[id].class_type)!;
  for (const { name, spec, required } of declaredInputs(def)) {
    const issue: Issue = (type, message, details, extra) => issues.push({ type, message, details, extra_info: { input_name: name, ...extra } });
    const raw = workflow[id].inputs[name];
    if (raw === undefined) {
      if (required) issue('required_input_missing', 'Required input is missing', name, {});
      continue;
    }
    const value = readInput(raw);
    if (value.kind === 'bad_link') {
      issue('bad_linked_input', 'Bad linked input, must be a length-2 list of [node_id, slot_index]', name, {
        input_config: spec,
        received_value: raw,
      });
    } else if (value.kind === 'link') {
      checkLink(workflow, definitionOf, name, spec, value.link, issue);
    } else {
      checkConstant(name, spec, value.value, issue);
    }
  }
  return issues;
}

function checkLink(workflow: Workflow, definitionOf: DefinitionOf, name: string, spec: InputSpec, link: [string, number], issue: Issue): void {
  // hasOwn: an id like `constructor` must not find Object.prototype's member.
  const source = Object.hasOwn(workflow, link[0]) ? workflow[link[0]] : undefined;
  if (!source) {
    issue('bad_linked_input', 'Bad linked input, the linked node does not exist', `${name}, node #${link[0]}`, {
      input_config: spec,
      received_value: link,
      linked_node: link,
    });
    return;
  }
  const outputs = definitionOf(source.class_type)!.output;
  if (link[1] >= outputs.length) {
    issue('bad_linked_input', 'Bad linked input, output index out of range', `${name}, node #${link[0]} has ${outputs.length} output(s)`, {
      input_config: spec,
      received_value: link,
      linked_node: link,
    });
    return;
  }
  const received = outputs[link[1]];
  if (!typesMatch(received, spec[0])) {
    issue(
      'return_type_mismatch',
      'Return type mismatch between linked nodes',
      `${name}, received_type(${received}) mismatch input_type(${typeName(spec[0])})`,
      {
        input_config: spec,
        received_type: received,
        linked_node: link,
      },
    );
  }
}

/** The reference's rule: equal, or `*` on either side, or overlapping comma-separated unions. */
export function typesMatch(received: string, expected: string | readonly string[]): boolean {
  if (received === '*') return true;
  // A combo input takes a link from a node that outputs a combo (or COMBO) value.
  if (typeof expected !== 'string') return received === 'COMBO';
  if (received === expected) return true;
  const a = received.split(',').map((t) => t.trim());
  const b = expected.split(',').map((t) => t.trim());
  return a.includes('*') || b.includes('*') || a.some((t) => b.includes(t));
}

// An integer beyond 2^53 arrives as a BigInt (lib/json.ts keeps it exact): a
// valid INT (seeds go to 2^64 - 1), and a FLOAT as the reference's float() takes it.
const CONSTANT_CHECKS: Record<string, (value: unknown) => boolean> = {
  INT: (v) => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)),
  FLOAT: (v) => typeof v === 'bigint' || (typeof v === 'number' && Number.isFinite(v)),
  STRING: (v) => typeof v === 'string',
  BOOLEAN: (v) => typeof v === 'boolean',
};

function checkConstant(name: string, spec: InputSpec, value: unknown, issue: Issue): void {
  const [type, options = {}] = spec;
  if (typeof type !== 'string') {
    if (!type.includes(value as string)) {
      // Like the reference: don't echo huge lists (e.g. every model file) back.
      const list = type.length > 20 ? `(list of length ${type.length})` : stringifyJson(type);
      issue('value_not_in_list', 'Value not in list', `${name}: ${stringifyJson(value)} not in ${list}`, {
        input_config: type.length > 20 ? null : spec,
        received_value: value,
      });
    }
    return;
  }
  const check = CONSTANT_CHECKS[type];
  // Other types (IMAGE, `*`, custom ones) take whatever constant is given, as in the reference.
  if (!check) return;
  if (!check(value)) {
    issue('invalid_input_type', `Failed to convert an input value to a ${type} value`, `${name}, ${stringifyJson(value)}`, {
      input_config: spec,
      received_value: value,
      received_type: value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value,
    });
    return;
  }
  // Numbers and BigInts compare exactly with each other, either side.
  const n = value as number | bigint;
  const bound = (b: unknown): b is number | bigint => typeof b === 'number' || typeof b === 'bigint';
  if (bound(options.min) && n < options.min) {
    issue('value_smaller_than_min', `Value ${n} smaller than min of ${options.min}`, name, { input_config: spec, received_value: n });
  } else if (bound(options.max) && n > options.max) {
    issue('value_bigger_than_max', `Value ${n} bigger than max of ${options.max}`, name, { input_config: spec, received_value: n });
  }
}

function typeName(type: string | readonly string[]): string {
  return typeof type === 'string' ? type : 'COMBO';
}
