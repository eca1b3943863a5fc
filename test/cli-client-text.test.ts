// The words of the CLI client's progress display and the parsing of its
// arguments' contents, apart from any server: the stage text for each kind
// of job state, and the workflow wrappers and --input forms `run` accepts.
import { describe, expect, it } from 'vitest';
import { percentOf, stageText } from '../adapters/node/client/progress-text.ts';
import { assetReference, parseInputFlag } from '../adapters/node/client/workflow-file.ts';

const progress = (over: Record<string, unknown> = {}) => ({
  value: 0.5,
  nodes_done: 1,
  nodes_total: 3,
  current_node: '2',
  current_node_class: 'KSampler',
  step: 4,
  steps: 10,
  message: 'KSampler 4/10',
  ...over,
});

describe('progress text', () => {
  it('shows the queue position while queued, when there is one', () => {
    expect(stageText({ status: 'queued', queue_position: 2, progress: null })).toBe('queued (position 2)');
    expect(stageText({ status: 'queued', queue_position: null, progress: null })).toBe('queued');
  });

  it('shows node x of y, the node class and its steps while running', () => {
    expect(stageText({ status: 'running', queue_position: null, progress: progress() })).toBe('node 2 of 3 KSampler step 4/10');
    expect(stageText({ status: 'running', queue_position: null, progress: progress({ current_node_class: null, step: null, steps: null }) })).toBe(
      'node 2 of 3 #2',
    );
    expect(stageText({ status: 'running', queue_position: null, progress: progress({ nodes_done: 0, current_node: null }) })).toBe('starting');
    expect(stageText({ status: 'running', queue_position: null, progress: null })).toBe('running');
  });

  it('ends on the node reached and the final status', () => {
    const done = progress({ value: 1, nodes_done: 3, current_node: null, current_node_class: null, step: null, steps: null });
    expect(stageText({ status: 'succeeded', queue_position: null, progress: done })).toBe('node 3 of 3, succeeded');
    expect(stageText({ status: 'failed', queue_position: null, progress: progress() })).toBe('node 2 of 3 KSampler step 4/10, failed');
    expect(stageText({ status: 'canceled', queue_position: null, progress: null })).toBe('canceled');
  });

  it('percent is whole, 100 once succeeded', () => {
    expect(percentOf({ status: 'running', queue_position: null, progress: progress({ value: 0.6666 }) })).toBe(66);
    expect(percentOf({ status: 'succeeded', queue_position: null, progress: null })).toBe(100);
    expect(percentOf({ status: 'queued', queue_position: 0, progress: null })).toBe(0);
  });
});

describe('run arguments', () => {
  it('--input NODE.INPUT=path splits at the last dot before the first "="', () => {
    expect(parseInputFlag('10.image=photo.png')).toEqual({ node: '10', input: 'image', path: 'photo.png' });
    expect(parseInputFlag('a.b.image=dir/x=y.png')).toEqual({ node: 'a.b', input: 'image', path: 'dir/x=y.png' });
    for (const bad of ['image=x.png', '.image=x.png', '10.=x.png', '10.image=', '10.image'])
      expect(() => parseInputFlag(bad)).toThrow(/NODE\.INPUT=path/);
  });

  it('an input is set to the contract’s typed asset reference, hints only when known', () => {
    expect(assetReference({ id: 'a1', hash: 'blake3:ab', size_bytes: 1, content_type: 'image/png', file_path: 'x.png' })).toEqual({
      __type: 'core/ASSET',
      info: { id: 'a1', hash: 'blake3:ab', file_path: 'x.png' },
    });
    expect(assetReference({ id: 'a1', hash: null, size_bytes: 1, content_type: 'image/png' })).toEqual({ __type: 'core/ASSET', info: { id: 'a1' } });
  });
});
