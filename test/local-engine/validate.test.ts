// Workflow validation against the reference's error types: every top-level
// and per-node type, the node_errors shape, partial success and reachability.
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../engine/local/registry.ts';
import type { Workflow } from '../../engine/types.ts';
import { validateWorkflow } from '../../engine/validate-workflow.ts';
import { createTestNodes } from '../helpers/local-nodes.ts';

const registry = createRegistry(createTestNodes().nodes);

/** 1, 2 -> Add 3 -> Show 4; a Text node 5 that nothing needs yet. */
function base(): Workflow {
  return {
    '1': { class_type: 'Number', inputs: { value: 3 } },
    '2': { class_type: 'Number', inputs: { value: 4 } },
    '3': { class_type: 'Add', inputs: { a: ['1', 0], b: ['2', 0] } },
    '4': { class_type: 'Show', inputs: { value: ['3', 0] } },
    '5': { class_type: 'Text', inputs: { text: 'hi', flag: true, mode: 'fast' } },
  };
}

describe('validateWorkflow: top-level errors', () => {
  it.each([
    ['null', null],
    ['an array', [{ class_type: 'Show', inputs: {} }]],
    ['a string', 'prompt'],
    ['a node that is not an object', { '1': 5 }],
    ['a node without class_type', { '1': { inputs: {} } }],
    ['a non-string class_type', { '1': { class_type: 3, inputs: {} } }],
    ['a node without inputs', { '1': { class_type: 'Show' } }],
    ['inputs that are an array', { '1': { class_type: 'Show', inputs: [] } }],
  ])('invalid_prompt for %s', (_, workflow) => {
    const r = validateWorkflow(workflow, registry.definitionOf);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.type).toBe('invalid_prompt');
      expect(r.node_errors).toEqual({});
    }
  });

  it('missing_node_type names the node and its class', () => {
    const r = validateWorkflow({ ...base(), '7': { class_type: 'Nope', inputs: {} } }, registry.definitionOf);
    expect(r).toMatchObject({
      ok: false,
      error: { type: 'missing_node_type', details: "Node ID '#7'", extra_info: { node_id: '7', class_type: 'Nope' } },
    });
  });

  it('prompt_no_outputs when no node is an output node', () => {
    const { '4': _, ...noOutput } = base();
    expect(validateWorkflow(noOutput, registry.definitionOf)).toMatchObject({
      ok: false,
      error: { type: 'prompt_no_outputs', message: 'Prompt has no outputs' },
    });
    expect(validateWorkflow({}, registry.definitionOf)).toMatchObject({ ok: false, error: { type: 'prompt_no_outputs' } });
  });
});

type Edit = (w: Workflow) => void;
const inputs = (w: Workflow, id: string) => w[id].inputs;
const textInto3: Edit = (w) => {
  inputs(w, '3').a = ['5', 0];
};
/** Makes output 4 need node 5, through its INT output. */
const need5: Edit = (w) => {
  inputs(w, '3').a = ['5', 1];
};

// [case, edit, node with the error, type, input_name]
const NODE_CASES: Array<[string, Edit, string, string, string]> = [
  ['a missing required input', (w) => delete inputs(w, '3').b, '3', 'required_input_missing', 'b'],
  ['a link of one element', (w) => void (inputs(w, '3').a = ['1']), '3', 'bad_linked_input', 'a'],
  ['a link of three elements', (w) => void (inputs(w, '3').a = ['1', 0, 0]), '3', 'bad_linked_input', 'a'],
  ['a link with a numeric node id', (w) => void (inputs(w, '3').a = [1, 0]), '3', 'bad_linked_input', 'a'],
  ['a link with a fractional index', (w) => void (inputs(w, '3').a = ['1', 0.5]), '3', 'bad_linked_input', 'a'],
  ['a link to a missing node', (w) => void (inputs(w, '3').a = ['99', 0]), '3', 'bad_linked_input', 'a'],
  ['a link to an id that only Object.prototype has', (w) => void (inputs(w, '3').a = ['constructor', 0]), '3', 'bad_linked_input', 'a'],
  ['a link to an output index out of range', (w) => void (inputs(w, '3').a = ['1', 1]), '3', 'bad_linked_input', 'a'],
  ['a STRING output linked into an INT input', textInto3, '3', 'return_type_mismatch', 'a'],
  ['a fractional INT', (w) => void (inputs(w, '1').value = 1.5), '1', 'invalid_input_type', 'value'],
  ['a numeric string for an INT', (w) => void (inputs(w, '1').value = '3'), '1', 'invalid_input_type', 'value'],
  ['null for an INT', (w) => void (inputs(w, '1').value = null), '1', 'invalid_input_type', 'value'],
  ['a string for a FLOAT', (w) => void (inputs(w, '3').scale = '0.5'), '3', 'invalid_input_type', 'scale'],
  ['Infinity for a FLOAT', (w) => void (inputs(w, '3').scale = Infinity), '3', 'invalid_input_type', 'scale'],
  ['a number for a STRING', (w) => void ((inputs(w, '5').text = 5), need5(w)), '5', 'invalid_input_type', 'text'],
  ['a string for a BOOLEAN', (w) => void ((inputs(w, '5').flag = 'true'), need5(w)), '5', 'invalid_input_type', 'flag'],
  ['a combo value not in the list', (w) => void ((inputs(w, '5').mode = 'medium'), need5(w)), '5', 'value_not_in_list', 'mode'],
  ['an INT below min', (w) => void (inputs(w, '1').value = -1), '1', 'value_smaller_than_min', 'value'],
  ['an INT above max', (w) => void (inputs(w, '1').value = 101), '1', 'value_bigger_than_max', 'value'],
  ['an optional FLOAT above max', (w) => void (inputs(w, '3').scale = 2), '3', 'value_bigger_than_max', 'scale'],
  ['a wrapped value above max', (w) => void (inputs(w, '1').value = { __value__: 101 }), '1', 'value_bigger_than_max', 'value'],
];

describe('validateWorkflow: per-node errors', () => {
  it.each(NODE_CASES)('%s', (_, edit, nodeId, type, input_name) => {
    const w = base();
    edit(w);
    const r = validateWorkflow(w, registry.definitionOf);
    if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
    expect(r.error).toMatchObject({ type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation', extra_info: {} });
    const entry = r.node_errors[nodeId];
    expect(entry.class_type).toBe(w[nodeId].class_type);
    expect(entry.dependent_outputs).toEqual(['4']);
    expect(entry.errors).toHaveLength(1);
    expect(entry.errors[0]).toEqual({
      type,
      message: expect.any(String),
      details: expect.any(String),
      extra_info: expect.objectContaining({ input_name }),
    });
    expect(r.error.details).toContain(entry.errors[0].message);
    // Downstream nodes fail with the upstream one but carry no errors of their own.
    expect(Object.keys(r.node_errors)).toEqual([nodeId]);
  });

  it('reports the exact shape of an issue', () => {
    const w = base();
    inputs(w, '1').value = 101;
    expect(validateWorkflow(w, registry.definitionOf)).toEqual({
      ok: false,
      error: {
        type: 'prompt_outputs_failed_validation',
        message: 'Prompt outputs failed validation',
        details: 'Value 101 bigger than max of 100: value',
        extra_info: {},
      },
      node_errors: {
        '1': {
          errors: [
            {
              type: 'value_bigger_than_max',
              message: 'Value 101 bigger than max of 100',
              details: 'value',
              extra_info: { input_name: 'value', input_config: ['INT', { default: 0, min: 0, max: 100 }], received_value: 101 },
            },
          ],
          dependent_outputs: ['4'],
          class_type: 'Number',
        },
      },
    });
  });

  it('dependency_cycle on every node of a cycle the outputs need', () => {
    const w = base();
    inputs(w, '3').a = ['6', 0];
    w['6'] = { class_type: 'Add', inputs: { a: ['3', 0], b: ['2', 0] } };
    const r = validateWorkflow(w, registry.definitionOf);
    if (r.ok) throw new Error('expected a failure');
    expect(Object.keys(r.node_errors).sort()).toEqual(['3', '6']);
    expect(r.node_errors['3'].errors).toEqual([
      expect.objectContaining({ type: 'dependency_cycle', extra_info: expect.objectContaining({ input_name: 'a', linked_node: ['6', 0] }) }),
    ]);
    expect(r.node_errors['6'].errors[0]).toMatchObject({ type: 'dependency_cycle', extra_info: { input_name: 'a', linked_node: ['3', 0] } });
  });

  it('dependency_cycle for a node linked to itself', () => {
    const w = base();
    inputs(w, '3').b = ['3', 0];
    const r = validateWorkflow(w, registry.definitionOf);
    expect(r).toMatchObject({ ok: false, node_errors: { '3': { errors: [{ type: 'dependency_cycle', extra_info: { input_name: 'b' } }] } } });
  });
});

describe('validateWorkflow: what is validated', () => {
  it('passes a valid workflow and lists its outputs', () => {
    expect(validateWorkflow(base(), registry.definitionOf)).toEqual({ ok: true, outputs: ['4'], node_errors: {} });
  });

  it('ignores nodes no output needs, even invalid or cyclic ones', () => {
    const w = base();
    w['8'] = { class_type: 'Number', inputs: { value: 1000 } };
    w['9'] = { class_type: 'Add', inputs: { a: ['9', 0] } };
    expect(validateWorkflow(w, registry.definitionOf)).toMatchObject({ ok: true, outputs: ['4'] });
  });

  it('keeps the outputs that pass and names the failing ones', () => {
    const w = base();
    w['6'] = { class_type: 'Number', inputs: { value: -5 } };
    w['7'] = { class_type: 'Show', inputs: { value: ['6', 0] } };
    const r = validateWorkflow(w, registry.definitionOf);
    expect(r).toMatchObject({ ok: true, outputs: ['4'] });
    expect(r.node_errors).toEqual({
      '6': { errors: [expect.objectContaining({ type: 'value_smaller_than_min' })], dependent_outputs: ['7'], class_type: 'Number' },
    });
  });

  it('lists every output a shared failing node breaks', () => {
    const w = base();
    inputs(w, '1').value = 'x';
    w['7'] = { class_type: 'Show', inputs: { value: ['1', 0] } };
    const r = validateWorkflow(w, registry.definitionOf);
    expect(r).toMatchObject({ ok: false, node_errors: { '1': { dependent_outputs: ['4', '7'] } } });
  });

  it('accepts any linked type into a * input and a wrapped constant', () => {
    const w = base();
    w['6'] = { class_type: 'ShowAny', inputs: { value: ['5', 0] } };
    inputs(w, '2').value = { __value__: 7 };
    expect(validateWorkflow(w, registry.definitionOf)).toMatchObject({ ok: true, outputs: ['4', '6'] });
  });

  it('ignores inputs the class does not declare', () => {
    const w = base();
    inputs(w, '3').extra = ['99', 0];
    expect(validateWorkflow(w, registry.definitionOf)).toMatchObject({ ok: true });
  });
});
