// The storage-free submission checks: UI exports, typed asset references and
// their resolution, the engine verdict as v2 node_errors, and the node count
// progress is weighted by.
import { describe, expect, it } from 'vitest';
import { countNodesToRun, findAssetRefs, isUiExport, resolveAssetRefs, workflowErrors } from '../../core/jobs/workflow-check.ts';
import type { ValidationIssue, Workflow } from '../../engine/types.ts';

const ID = '9F8A1C0D-2B3E-4F56-8A7B-1C2D3E4F5A6B';
const ref = (info: unknown) => ({ __type: 'core/ASSET', info });
const issue = (type: string, input_name?: string): ValidationIssue => ({
  type,
  message: `msg ${type}`,
  details: 'detail',
  extra_info: input_name ? { input_name } : {},
});

describe('workflow checks', () => {
  it('tells a UI export (nodes + links arrays) from an API-format graph', () => {
    expect(isUiExport({ nodes: [], links: [], version: 0.4 })).toBe(true);
    expect(isUiExport({ nodes: { class_type: 'X', inputs: {} } })).toBe(false);
    expect(isUiExport({ '1': { class_type: 'X', inputs: {} } })).toBe(false);
  });

  it('finds asset references, flags malformed ones, and resolves them to lower-case ids', () => {
    const wf = {
      '1': { class_type: 'LoadImage', inputs: { image: ref({ id: ID, file_path: 'a.png' }) } },
      '2': { class_type: 'LoadImage', inputs: { image: ref({ hash: 'blake3:00' }), other: 5 } },
      '3': { class_type: 'LoadImage', inputs: { image: ref('nope') } },
      '4': 'not a node',
    };
    expect(findAssetRefs(wf)).toEqual([
      { node_id: '1', field: 'image', id: ID.toLowerCase() },
      { node_id: '2', field: 'image', id: null },
      { node_id: '3', field: 'image', id: null },
    ]);
    const resolved = resolveAssetRefs(wf);
    expect(resolved['1'].inputs.image).toBe(ID.toLowerCase());
    expect(resolved['2'].inputs).toEqual({ image: '', other: 5 });
    expect(resolved['4']).toBe('not a node');
    // The submitted graph is left as it was (it is what GET .../workflow returns).
    expect((wf['1'].inputs.image as { __type: string }).__type).toBe('core/ASSET');
  });

  it('turns the engine verdict into node_errors {field, reason, message}', () => {
    expect(workflowErrors({ ok: true, outputs: ['9'] })).toBeNull();
    expect(workflowErrors({ ok: true, outputs: ['9'], node_errors: {} })).toBeNull();
    const failed = workflowErrors({
      ok: false,
      error: issue('prompt_outputs_failed_validation'),
      node_errors: {
        '12': {
          errors: [issue('required_input_missing', 'model'), issue('value_bigger_than_max', 'steps')],
          dependent_outputs: ['9'],
          class_type: 'KSampler',
        },
      },
    });
    expect(failed).toEqual({
      message: 'Node 12 (KSampler): msg required_input_missing: detail',
      reason: 'prompt_outputs_failed_validation',
      node_errors: {
        '12': [
          { field: 'model', reason: 'required_input_missing', message: 'msg required_input_missing: detail' },
          { field: 'steps', reason: 'value_bigger_than_max', message: 'msg value_bigger_than_max: detail' },
        ],
      },
    });
    // A whole-prompt error names its node in extra_info.
    const unknown = workflowErrors({ ok: false, error: { ...issue('missing_node_type'), extra_info: { node_id: '3' } }, node_errors: {} });
    expect(unknown?.node_errors).toEqual({ '3': [{ field: null, reason: 'missing_node_type', message: 'msg missing_node_type: detail' }] });
    // Some outputs passing is not enough for a v2 job: it runs as submitted or not at all.
    const partial = workflowErrors({
      ok: true,
      outputs: ['9'],
      node_errors: { '5': { errors: [issue('invalid_input_type', 'a')], dependent_outputs: ['6'], class_type: 'Add' } },
    });
    expect(partial?.node_errors['5'][0].reason).toBe('invalid_input_type');
  });

  it('counts the nodes a run visits: the outputs and what they link to, nothing else', () => {
    const wf: Workflow = {
      a: { class_type: 'N', inputs: { v: 1 } },
      b: { class_type: 'N', inputs: { v: ['a', 0] } },
      c: { class_type: 'Out', inputs: { v: ['b', 0], w: ['a', 0] } },
      unused: { class_type: 'N', inputs: { v: ['a', 0] } },
      // A two-element array whose first item names no node is a value, not a link.
      d: { class_type: 'Out', inputs: { pair: ['zz', 1] } },
    };
    expect(countNodesToRun(wf, ['c'])).toBe(3);
    expect(countNodesToRun(wf, ['c', 'd'])).toBe(4);
    expect(countNodesToRun(wf, [])).toBe(0);
  });
});
