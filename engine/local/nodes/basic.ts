// The basic nodes: primitives and string nodes under the reference's names
// and inputs, so workflows written for it run here; math under graphrun.*
// names (the reference has no such node); a text saver and a value preview.

import { isImageBatch } from '../../../lib/image/batch.ts';
import { stringifyJson } from '../../../lib/json.ts';
import { defineNode, type LocalNode } from '../define-node.ts';
import { MATH_OPS, mathFloat, mathInt } from './math.ts';

const SAFE = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };

const primitive = (name: string, type: string, options: Record<string, unknown> = {}): LocalNode =>
  defineNode({
    name,
    category: 'utils/primitive',
    required: { value: [type, options] },
    outputs: [{ type }],
    run: ({ value }) => ({ outputs: [value] }),
    // Nothing allocated; the value is known ahead, e.g. for an EmptyImage's size.
    memory: ({ value }) => ({ bytes: 0, outputs: [value] }),
  });

export const primitiveInt = primitive('PrimitiveInt', 'INT', { ...SAFE, control_after_generate: true });
export const primitiveFloat = primitive('PrimitiveFloat', 'FLOAT', SAFE);
export const primitiveString = primitive('PrimitiveString', 'STRING');
export const primitiveStringMultiline = primitive('PrimitiveStringMultiline', 'STRING', { multiline: true });
export const primitiveBoolean = primitive('PrimitiveBoolean', 'BOOLEAN');

export const stringConcatenate = defineNode({
  name: 'StringConcatenate',
  display_name: 'Concatenate',
  category: 'utils/string',
  required: {
    string_a: ['STRING', { multiline: true }],
    string_b: ['STRING', { multiline: true }],
    delimiter: ['STRING', { multiline: false, default: '' }],
  },
  outputs: [{ type: 'STRING' }],
  run: ({ string_a, string_b, delimiter }) => ({ outputs: [`${string_a}${delimiter}${string_b}`] }),
});

export const stringReplace = defineNode({
  name: 'StringReplace',
  display_name: 'Replace',
  category: 'utils/string',
  required: { string: ['STRING', { multiline: true }], find: ['STRING', { multiline: true }], replace: ['STRING', { multiline: true }] },
  outputs: [{ type: 'STRING' }],
  // Literal, every occurrence, like Python's str.replace.
  run: ({ string, find, replace }) => ({ outputs: [(string as string).replaceAll(find as string, () => replace as string)] }),
});

export const stringLength = defineNode({
  name: 'StringLength',
  display_name: 'Length',
  category: 'utils/string',
  required: { string: ['STRING', { multiline: true }] },
  outputs: [{ type: 'INT', name: 'length' }],
  // Code points, like Python's len(), not UTF-16 units.
  run: ({ string }) => ({ outputs: [[...(string as string)].length] }),
});

export const mathIntNode = defineNode({
  name: 'graphrun.MathInt',
  display_name: 'Math (INT)',
  category: 'graphrun/math',
  required: { a: ['INT', { default: 0, ...SAFE }], b: ['INT', { default: 0, ...SAFE }], op: [MATH_OPS, { default: 'add' }] },
  outputs: [{ type: 'INT' }],
  run: ({ a, b, op }) => ({ outputs: [mathInt(a as number, b as number, op as string)] }),
});

export const mathFloatNode = defineNode({
  name: 'graphrun.MathFloat',
  display_name: 'Math (FLOAT)',
  category: 'graphrun/math',
  required: { a: ['FLOAT', { default: 0 }], b: ['FLOAT', { default: 0 }], op: [MATH_OPS, { default: 'add' }] },
  outputs: [{ type: 'FLOAT' }],
  run: ({ a, b, op }) => ({ outputs: [mathFloat(a as number, b as number, op as string)] }),
});

export const saveText = defineNode({
  name: 'graphrun.SaveText',
  display_name: 'Save Text',
  category: 'graphrun/text',
  required: { text: ['STRING', { multiline: true, forceInput: true }], filename_prefix: ['STRING', { default: 'graphrun' }] },
  output_node: true,
  async run({ text, filename_prefix }, ctx) {
    // The prefix becomes part of a file name: no path separators or control characters.
    const prefix = (filename_prefix as string).replace(/[\\/\u0000-\u001f]|\.\./g, '_') || 'graphrun';
    const body = new TextEncoder().encode(text as string);
    await ctx.commitOutput({ name: `${prefix}.txt`, type: 'text', content_type: 'text/plain; charset=utf-8', body });
    return { outputs: [], ui: { text: [text] } };
  },
});

export const previewAny = defineNode({
  name: 'PreviewAny',
  display_name: 'Preview Any',
  category: 'utils',
  required: { source: ['*', {}] },
  output_node: true,
  run: ({ source }) => ({ outputs: [], ui: { text: [show(source)] } }),
});

/** Strings as they are, images by their shape, other values as JSON when they have one. */
function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isImageBatch(value)) return `IMAGE [${value.count}, ${value.height}, ${value.width}, 3]`;
  if (value === null || typeof value !== 'object') return String(value);
  try {
    return stringifyJson(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export const basicNodeList: LocalNode[] = [
  primitiveInt,
  primitiveFloat,
  primitiveString,
  primitiveStringMultiline,
  primitiveBoolean,
  stringConcatenate,
  stringReplace,
  stringLength,
  mathIntNode,
  mathFloatNode,
  saveText,
  previewAny,
];
