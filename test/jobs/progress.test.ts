// The progress tracker folds engine events into complete, monotonic v2 Progress snapshots.
import { describe, expect, it } from 'vitest';
import { createProgressTracker, type Progress } from '../../core/jobs/progress.ts';

const KEYS = ['value', 'nodes_done', 'nodes_total', 'current_node', 'current_node_class', 'step', 'steps', 'message'];

describe('createProgressTracker', () => {
  it('starts at zero with every field present', () => {
    const p = createProgressTracker(4).snapshot();
    expect(Object.keys(p).sort()).toEqual([...KEYS].sort());
    expect(p).toEqual({
      value: 0,
      nodes_done: 0,
      nodes_total: 4,
      current_node: null,
      current_node_class: null,
      step: null,
      steps: null,
      message: null,
    });
  });

  it('counts cached nodes as done', () => {
    const t = createProgressTracker(4);
    const p = t.update({ type: 'cached', node_ids: ['1', '2'] })!;
    expect(p.nodes_done).toBe(2);
    expect(p.value).toBe(0.5);
    expect(t.update({ type: 'cached', node_ids: [] })).toBeNull();
  });

  it('executing sets the current node and finishes the previous one', () => {
    const t = createProgressTracker(4);
    let p = t.update({ type: 'executing', node_id: '3', class_type: 'CheckpointLoader' })!;
    expect(p).toMatchObject({ current_node: '3', current_node_class: 'CheckpointLoader', nodes_done: 0, message: 'CheckpointLoader' });
    p = t.update({ type: 'executing', node_id: '5', class_type: 'KSampler' })!;
    expect(p).toMatchObject({ current_node: '5', current_node_class: 'KSampler', nodes_done: 1, value: 0.25 });
    // A repeated executing for the same node changes nothing.
    expect(t.update({ type: 'executing', node_id: '5', class_type: 'KSampler' })!.nodes_done).toBe(1);
  });

  it('weights the node in progress by step/steps and writes the message', () => {
    const t = createProgressTracker(4);
    t.update({ type: 'cached', node_ids: ['1'] });
    t.update({ type: 'executing', node_id: '5', class_type: 'KSampler' });
    const p = t.update({ type: 'progress', node_id: '5', value: 21, max: 50 })!;
    expect(p).toMatchObject({ step: 21, steps: 50, message: 'KSampler 21/50', nodes_done: 1 });
    expect(p.value).toBeCloseTo((1 + 21 / 50) / 4, 4);
  });

  it('executed marks the node done and clears the current node', () => {
    const t = createProgressTracker(2);
    t.update({ type: 'executing', node_id: '5', class_type: 'KSampler' });
    t.update({ type: 'progress', node_id: '5', value: 50, max: 50 });
    const p = t.update({ type: 'executed', node_id: '5', output: {} })!;
    expect(p).toMatchObject({ nodes_done: 1, value: 0.5, current_node: null, step: null, steps: null, message: null });
    // Output nodes of a cached run get `executed` too: counted once.
    expect(t.update({ type: 'executed', node_id: '5', output: {} })!.nodes_done).toBe(1);
  });

  it('ignores events that carry no progress', () => {
    const t = createProgressTracker(2);
    expect(t.update({ type: 'execution_start' })).toBeNull();
    expect(t.update({ type: 'text', node_id: '1', text: 'hi' })).toBeNull();
    expect(t.update({ type: 'preview', node_id: '1', format: 'jpeg', bytes: new Uint8Array() })).toBeNull();
  });

  it('never lets value decrease, even when a node restarts its steps', () => {
    const t = createProgressTracker(2);
    t.update({ type: 'executing', node_id: '5', class_type: 'KSampler' });
    const high = t.update({ type: 'progress', node_id: '5', value: 40, max: 50 })!;
    const low = t.update({ type: 'progress', node_id: '5', value: 2, max: 50 })!;
    expect(low.step).toBe(2);
    expect(low.value).toBe(high.value);
  });

  it('runs a whole job monotonically to 1', () => {
    const t = createProgressTracker(5);
    const seen: Progress[] = [];
    const push = (p: Progress | null) => p && seen.push(p);
    push(t.update({ type: 'execution_start' }));
    push(t.update({ type: 'cached', node_ids: ['1', '2'] }));
    push(t.update({ type: 'executing', node_id: '3', class_type: 'CLIPTextEncode' }));
    push(t.update({ type: 'executing', node_id: '4', class_type: 'KSampler' }));
    for (let i = 1; i <= 20; i++) push(t.update({ type: 'progress', node_id: '4', value: i, max: 20 }));
    push(t.update({ type: 'executing', node_id: '6', class_type: 'SaveImage' }));
    push(t.update({ type: 'executed', node_id: '6', output: {} }));
    const values = seen.map((p) => p.value);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(values.every((v) => v >= 0 && v <= 1)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ value: 1, nodes_done: 5, nodes_total: 5 });
  });

  it('each snapshot is a fresh object', () => {
    const t = createProgressTracker(1);
    const a = t.snapshot();
    t.update({ type: 'executed', node_id: '1', output: {} });
    expect(a.value).toBe(0);
    expect(t.snapshot()).not.toBe(t.snapshot());
  });

  it('keeps value within 0..1 when more nodes finish than announced', () => {
    const t = createProgressTracker(1);
    const p = t.update({ type: 'cached', node_ids: ['1', '2', '3'] })!;
    expect(p).toMatchObject({ value: 1, nodes_done: 3, nodes_total: 3 });
  });

  it('names a node by id when progress arrives before executing', () => {
    const t = createProgressTracker(2);
    const p = t.update({ type: 'progress', node_id: '9', value: 1, max: 4 })!;
    expect(p).toMatchObject({ current_node: '9', current_node_class: null, message: 'node 9 1/4' });
  });

  it('handles an empty workflow and finish()', () => {
    const t = createProgressTracker(0);
    expect(t.snapshot().value).toBe(0);
    expect(t.finish()).toMatchObject({ value: 1, nodes_done: 0, nodes_total: 0 });
    const u = createProgressTracker(3);
    u.update({ type: 'executing', node_id: '1', class_type: 'X' });
    expect(u.finish()).toMatchObject({ value: 1, nodes_done: 3, current_node: null, message: null });
  });

  it('rejects a bad node count', () => {
    expect(() => createProgressTracker(-1)).toThrow(RangeError);
    expect(() => createProgressTracker(1.5)).toThrow(RangeError);
  });
});
