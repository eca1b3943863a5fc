// Validates submissions against the workers' node definitions with the local
// engine's rules (the reference's issue types and messages), so a bad
// workflow is refused at submission rather than at the worker. File-upload
// combos (LoadImage's list of the worker's files) accept any name: the job's
// assets are uploaded, and named, only when it runs.
import type { LocalNode } from '../local/define-node.ts';
import type { NodeRegistry } from '../local/registry.ts';
import { validateWorkflow } from '../local/validate.ts';
import type { InputSpec, NodeDefinition, ValidationResult, Workflow } from '../types.ts';
import { hasUploadFlag } from './output-files.ts';

function relaxUploads(inputs: Record<string, InputSpec> | undefined): Record<string, InputSpec> | undefined {
  if (!inputs) return inputs;
  const out: Record<string, InputSpec> = {};
  for (const [name, spec] of Object.entries(inputs)) {
    out[name] = hasUploadFlag(spec[1]) && typeof spec[0] !== 'string' ? ['STRING', spec[1]] : spec;
  }
  return out;
}

/** A registry view of remote definitions: validation reads only `definition`; nothing here ever runs. */
export function registryOf(defs: Record<string, NodeDefinition>): NodeRegistry {
  const nodes = new Map<string, LocalNode>();
  const notHere = () => {
    throw new Error('remote node classes run on their worker');
  };
  for (const [name, def] of Object.entries(defs)) {
    const input = { ...def.input, required: relaxUploads(def.input?.required) ?? {}, optional: relaxUploads(def.input?.optional) };
    nodes.set(name, { definition: { ...def, input }, cacheable: true, run: notHere });
  }
  return {
    get: (c) => (Object.hasOwn(defs, c) ? nodes.get(c) : undefined),
    definitions: () => defs,
    list: () => [...nodes.values()],
  };
}

// One registry per definitions object: workers' definitions are replaced on refresh, never changed in place.
const registries = new WeakMap<Record<string, NodeDefinition>, NodeRegistry>();

export function validateAgainst(workflow: Workflow, defs: Record<string, NodeDefinition>): ValidationResult {
  let registry = registries.get(defs);
  if (!registry) registries.set(defs, (registry = registryOf(defs)));
  return validateWorkflow(workflow, registry);
}
