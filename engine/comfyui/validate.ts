// Validates submissions against the workers' node definitions with the
// reference's rules (engine/validate-workflow.ts: its issue types and
// messages), so a bad workflow is refused at submission rather than at the
// worker. File-upload combos (LoadImage's list of the worker's files) accept
// any name: the job's assets are uploaded, and named, only when it runs.
import type { InputSpec, NodeDefinition } from '../types.ts';
import type { DefinitionOf } from '../validate-workflow.ts';
import { hasUploadFlag } from './output-files.ts';

function relaxUploads(inputs: Record<string, InputSpec> | undefined): Record<string, InputSpec> | undefined {
  if (!inputs) return inputs;
  const out: Record<string, InputSpec> = {};
  for (const [name, spec] of Object.entries(inputs)) {
    out[name] = hasUploadFlag(spec[1]) && typeof spec[0] !== 'string' ? ['STRING', spec[1]] : spec;
  }
  return out;
}

/** The remote definitions as validation reads them: upload combos relaxed to strings. */
export function definitionsOf(defs: Record<string, NodeDefinition>): DefinitionOf {
  const relaxed = new Map<string, NodeDefinition>();
  for (const [name, def] of Object.entries(defs)) {
    relaxed.set(name, {
      ...def,
      input: { ...def.input, required: relaxUploads(def.input?.required) ?? {}, optional: relaxUploads(def.input?.optional) },
    });
  }
  return (classType) => (Object.hasOwn(defs, classType) ? relaxed.get(classType) : undefined);
}
