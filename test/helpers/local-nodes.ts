// Test node classes for the local engine: a counter of run() calls per class,
// typed sources and sinks, a stepper that reports progress, a failing node
// and a non-cacheable one. Built with defineNode like real nodes.

import { defineNode, type LocalNode, type NodeSpec } from '../../engine/local/define-node.ts';
import type { Workflow } from '../../engine/types.ts';
import { pause } from '../../lib/pause.ts';

export interface TestNodes {
  nodes: LocalNode[];
  /** run() calls per class name since creation. */
  runs: Record<string, number>;
}

export function createTestNodes(opts: { steps?: number } = {}): TestNodes {
  const runs: Record<string, number> = {};
  const counted = (spec: NodeSpec): LocalNode =>
    defineNode({
      ...spec,
      run: (inputs, ctx) => {
        runs[spec.name] = (runs[spec.name] ?? 0) + 1;
        return spec.run(inputs, ctx);
      },
    });
  const nodes = [
    counted({
      name: 'Number',
      category: 'test',
      required: { value: ['INT', { default: 0, min: 0, max: 100 }] },
      outputs: [{ type: 'INT' }],
      run: ({ value }) => ({ outputs: [value] }),
    }),
    counted({
      name: 'Add',
      category: 'test',
      required: { a: ['INT', {}], b: ['INT', {}] },
      optional: { scale: ['FLOAT', { min: 0, max: 1 }] },
      outputs: [{ type: 'INT' }],
      run: ({ a, b }) => ({ outputs: [(a as number) + (b as number)] }),
    }),
    counted({
      name: 'Text',
      category: 'test',
      required: { text: ['STRING', {}], flag: ['BOOLEAN', {}], mode: [['fast', 'slow'], {}] },
      outputs: [{ type: 'STRING' }, { type: 'INT', name: 'length' }],
      run: ({ text }) => ({ outputs: [text, (text as string).length] }),
    }),
    counted({
      name: 'Show',
      category: 'test',
      output_node: true,
      required: { value: ['INT', {}] },
      run: ({ value }) => ({ outputs: [], ui: { text: [String(value)] } }),
    }),
    counted({
      name: 'ShowAny',
      category: 'test',
      output_node: true,
      required: { value: ['*', {}] },
      run: ({ value }) => ({ outputs: [], ui: { text: [String(value)] } }),
    }),
    counted({
      name: 'Stepper',
      category: 'test',
      required: { value: ['INT', {}] },
      outputs: [{ type: 'INT' }],
      run: ({ value }, ctx) => {
        const steps = opts.steps ?? 3;
        for (let i = 1; i <= steps; i++) ctx.progress(i, steps);
        return { outputs: [value] };
      },
    }),
    counted({
      name: 'Fail',
      category: 'test',
      required: { value: ['INT', {}] },
      outputs: [{ type: 'INT' }],
      run: () => {
        throw new TypeError('cannot do that');
      },
    }),
    counted({
      // Slow on purpose: `steps` sleeps of `ms` each, reporting progress and
      // honouring a cancel between steps, for tests of queues and cancels.
      name: 'Wait',
      category: 'test',
      cacheable: false,
      required: { value: ['INT', {}], ms: ['INT', { default: 100, min: 0, max: 600000 }], steps: ['INT', { default: 1, min: 1, max: 10000 }] },
      outputs: [{ type: 'INT' }],
      run: async ({ value, ms, steps }, ctx) => {
        for (let i = 1; i <= (steps as number); i++) {
          await pause(ms as number, ctx.signal);
          ctx.progress(i, steps as number);
        }
        return { outputs: [value] };
      },
    }),
    counted({
      name: 'Random',
      category: 'test',
      cacheable: false,
      outputs: [{ type: 'INT' }],
      run: () => ({ outputs: [4] }),
    }),
  ];
  return { nodes, runs };
}

/** Number -> Wait -> Show: a job that takes about `ms * steps` and reports `steps` progress steps. */
export function waitWorkflow(value = 1, ms = 100, steps = 1): Workflow {
  return {
    w1: { class_type: 'Number', inputs: { value } },
    w2: { class_type: 'Wait', inputs: { value: ['w1', 0], ms, steps } },
    w3: { class_type: 'Show', inputs: { value: ['w2', 0] } },
  };
}

/** Number + Number -> Add -> Show; ids are given as a prefix so the same graph can be built under other ids. */
export function sumWorkflow(p: string, a = 3, b = 4): Workflow {
  return {
    [`${p}1`]: { class_type: 'Number', inputs: { value: a } },
    [`${p}2`]: { class_type: 'Number', inputs: { value: b } },
    [`${p}3`]: { class_type: 'Add', inputs: { a: [`${p}1`, 0], b: [`${p}2`, 0] } },
    [`${p}4`]: { class_type: 'Show', inputs: { value: [`${p}3`, 0] } },
  };
}
