// The basic nodes run through the local engine: primitives, string and math
// nodes, SaveText committing a text output, PreviewAny showing a value.
import { describe, expect, it } from 'vitest';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { mathFloat, mathInt } from '../../engine/local/nodes/math.ts';
import type { Workflow } from '../../engine/types.ts';
import { createFakeExecutionContext } from '../helpers/fake-execution-context.ts';

async function run(workflow: Workflow) {
  const fake = createFakeExecutionContext();
  await createLocalEngine().execute({ id: 'job-1', account_id: 'acct', workflow }, fake.ctx);
  return fake;
}
const preview = (source: unknown): Workflow => ({ p: { class_type: 'PreviewAny', inputs: { source } } });
const shown = async (workflow: Workflow, id = 'p') => (await run(workflow)).of('executed').find((e) => e.node_id === id)?.output;

describe('basic nodes', () => {
  it('SaveText commits a text/plain output and shows the text', async () => {
    const fake = await run({
      '1': { class_type: 'PrimitiveString', inputs: { value: 'héllo' } },
      '2': { class_type: 'graphrun.SaveText', inputs: { text: ['1', 0], filename_prefix: '../notes/out' } },
    });
    expect(fake.outputs).toHaveLength(1);
    expect(fake.outputs[0]).toMatchObject({ node_id: '2', type: 'text', content_type: 'text/plain; charset=utf-8', name: '__notes_out.txt' });
    expect(new TextDecoder().decode(fake.outputs[0].bytes)).toBe('héllo');
    expect(fake.of('executed')).toEqual([{ type: 'executed', node_id: '2', output: { text: ['héllo'] } }]);
  });

  it('chains primitives, string nodes and PreviewAny', async () => {
    const w: Workflow = {
      '1': { class_type: 'PrimitiveStringMultiline', inputs: { value: 'a-b' } },
      '2': { class_type: 'PrimitiveString', inputs: { value: 'c' } },
      '3': { class_type: 'StringConcatenate', inputs: { string_a: ['1', 0], string_b: ['2', 0], delimiter: '-' } },
      '4': { class_type: 'StringReplace', inputs: { string: ['3', 0], find: '-', replace: '+' } },
      '5': { class_type: 'StringLength', inputs: { string: ['4', 0] } },
      p: { class_type: 'PreviewAny', inputs: { source: ['4', 0] } },
      q: { class_type: 'PreviewAny', inputs: { source: ['5', 0] } },
    };
    const fake = await run(w);
    expect(fake.of('executed').map((e) => [e.node_id, e.output])).toEqual([
      ['p', { text: ['a+b+c'] }],
      ['q', { text: ['5'] }],
    ]);
  });

  it('math nodes compute through primitives', async () => {
    expect(
      await shown({
        '1': { class_type: 'PrimitiveInt', inputs: { value: -7 } },
        '2': { class_type: 'graphrun.MathInt', inputs: { a: ['1', 0], b: 2, op: 'divide' } },
        p: { class_type: 'PreviewAny', inputs: { source: ['2', 0] } },
      }),
    ).toEqual({ text: ['-4'] });
    expect(
      await shown({
        '1': { class_type: 'PrimitiveFloat', inputs: { value: 1.5 } },
        '2': { class_type: 'graphrun.MathFloat', inputs: { a: ['1', 0], b: 0.25, op: 'multiply' } },
        p: { class_type: 'PreviewAny', inputs: { source: ['2', 0] } },
      }),
    ).toEqual({ text: ['0.375'] });
  });

  it('PreviewAny shows booleans, numbers, strings and objects', async () => {
    expect(
      await shown({
        '1': { class_type: 'PrimitiveBoolean', inputs: { value: true } },
        p: { class_type: 'PreviewAny', inputs: { source: ['1', 0] } },
      }),
    ).toEqual({ text: ['true'] });
    expect(await shown(preview('plain'))).toEqual({ text: ['plain'] });
    expect(await shown(preview({ __value__: [1, 2] }))).toEqual({ text: ['[1,2]'] });
  });

  it('math follows the reference: floor division, modulo with the sign of the divisor, errors by zero', () => {
    expect(mathInt(7, -2, 'divide')).toBe(-4);
    expect(mathInt(-7, 3, 'modulo')).toBe(2);
    expect(mathInt(3, 9, 'min')).toBe(3);
    expect(mathFloat(1, 4, 'divide')).toBe(0.25);
    expect(() => mathInt(1, 0, 'divide')).toThrow(expect.objectContaining({ name: 'ZeroDivisionError' }));
    expect(() => mathInt(Number.MAX_SAFE_INTEGER, 2, 'add')).toThrow(RangeError);
  });

  it('a division by zero fails the job with its exception type', async () => {
    const fake = createFakeExecutionContext();
    const w: Workflow = {
      '1': { class_type: 'graphrun.MathInt', inputs: { a: 1, b: 0, op: 'modulo' } },
      p: { class_type: 'PreviewAny', inputs: { source: ['1', 0] } },
    };
    await expect(createLocalEngine().execute({ id: 'j', account_id: 'a', workflow: w }, fake.ctx)).rejects.toMatchObject({
      exception_type: 'ZeroDivisionError',
      node_id: '1',
      class_type: 'graphrun.MathInt',
    });
  });

  it('declares the reference IO of the primitives and string nodes', async () => {
    const defs = await createLocalEngine().nodeDefinitions();
    expect(defs.PrimitiveInt).toMatchObject({ input: { required: { value: ['INT', expect.any(Object)] } }, output: ['INT'] });
    expect(defs.PrimitiveStringMultiline.input.required.value).toEqual(['STRING', { multiline: true }]);
    expect(defs.StringConcatenate.input_order.required).toEqual(['string_a', 'string_b', 'delimiter']);
    expect(defs.StringReplace.input_order.required).toEqual(['string', 'find', 'replace']);
    expect(defs.StringLength).toMatchObject({ output: ['INT'], output_name: ['length'] });
    expect(defs.PreviewAny).toMatchObject({ output_node: true, input: { required: { source: ['*', {}] } } });
    expect(defs['graphrun.SaveText'].output_node).toBe(true);
  });
});
