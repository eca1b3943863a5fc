// Test node classes for the local engine: a counter of run() calls per class,
// typed sources and sinks, a stepper that reports progress, a failing node
// and a non-cacheable one. Built with defineNode like real nodes.
import { defineNode, type LocalNode, type NodeSpec } from '../../engine/local/define-node.ts';
import type { Workflow } from '../../engine/types.ts';

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
      name: 'Number', category: 'test',
      required: { value: ['INT', { default: 0, min: 0, max: 100 }] },
      outputs: [{ type: 'INT' }],
      run: ({ value }) => ({ outputs: [value] }),
    }),
    counted({
      name: 'Add', category: 'test',
      required: { a: ['INT', {}], b: ['INT', {}] },
      optional: { scale: ['FLOAT', { min: 0, max: 1 }] },
      outputs: [{ type: 'INT' }],
      run: ({ a, b }) => ({ outputs: [(a as number) + (b as number)] }),
    }),
    counted({
      name: 'Text', category: 'test',
      required: { text: ['STRING', {}], flag: ['BOOLEAN', {}], mode: [['fast', 'slow'], {}] },
      outputs: [{ type: 'STRING' }, { type: 'INT', name: 'length' }],
      run: ({ text }) => ({ outputs: [text, (text as string).length] }),
    }),
    counted({
      name: 'Show', category: 'test', output_node: true,
      required: { value: ['INT', {}] },
      run: ({ value }) => ({ outputs: [], ui: { text: [String(value)] } }),
    }),
    counted({
      name: 'ShowAny', category: 'test', output_node: true,
      required: { value: ['*', {}] },
      run: ({ value }) => ({ outputs: [], ui: { text: [String(value)] } }),
    }),
    counted({
      name: 'Stepper', category: 'test',
      required: { value: ['INT', {}] },
      outputs: [{ type: 'INT' }],
      run: ({ value }, ctx) => {
        const steps = opts.steps ?? 3;
        for (let i = 1; i <= steps; i++) ctx.progress(i, steps);
        return { outputs: [value] };
      },
    }),
    counted({
      name: 'Fail', category: 'test',
      required: { value: ['INT', {}] },
      outputs: [{ type: 'INT' }],
      run: () => {
        throw new TypeError('cannot do that');
      },
    }),
    counted({
      name: 'Random', category: 'test', cacheable: false,
      outputs: [{ type: 'INT' }],
      run: () => ({ outputs: [4] }),
    }),
  ];
  return { nodes, runs };
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
