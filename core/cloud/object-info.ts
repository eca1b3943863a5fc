// GET /object_info and GET /object_info/{class}: the engine's node
// definitions in the reference's format. Every field the reference writes is
// present, whatever the engine left out: `input` (`required`, plus `optional`
// / `hidden` when the class has them), `input_order` (from the inputs when
// missing), `output`, `output_name`, `output_is_list`, `output_node`, `name`,
// `display_name`, `description`, `python_module`, `category`, and the flags
// `deprecated`, `experimental` and `api_node` (partner nodes) as booleans, as
// recent reference versions write them. Unknown extra fields pass through.
// A class the engine does not have is `200 {}`, as the reference answers it.
import type { InputSpec, NodeDefinition } from '../../engine/types.ts';
import type { ServiceContext } from '../context.ts';
import { respondJson } from '../http/json-response.ts';
import { cloudAccount } from './auth.ts';

type Inputs = Record<string, InputSpec>;
const GROUPS = ['required', 'optional', 'hidden'] as const;

/** One definition with every reference field filled in. */
export function nodeInfo(name: string, def: Partial<NodeDefinition>): Record<string, unknown> {
  const given = (def.input ?? {}) as Partial<Record<(typeof GROUPS)[number], Inputs>>;
  const input: Record<string, Inputs> = { required: given.required ?? {} };
  const order: Record<string, string[]> = {};
  for (const group of GROUPS) {
    if (group !== 'required' && given[group] === undefined) continue;
    input[group] = given[group] ?? {};
    order[group] = def.input_order?.[group] ?? Object.keys(input[group]);
  }
  const output = def.output ?? [];
  return {
    ...def,
    input,
    input_order: order,
    output,
    output_is_list: def.output_is_list ?? output.map(() => false),
    output_name: def.output_name ?? [...output],
    name: def.name ?? name,
    display_name: def.display_name ?? def.name ?? name,
    description: def.description ?? '',
    python_module: def.python_module ?? 'nodes',
    category: def.category ?? '',
    output_node: def.output_node === true,
    deprecated: def.deprecated === true,
    experimental: def.experimental === true,
    api_node: def.api_node === true,
  };
}

const CACHE = { 'Cache-Control': 'no-store' };

export async function getObjectInfo(request: Request, ctx: ServiceContext): Promise<Response> {
  await cloudAccount(request, ctx);
  const defs = await ctx.engine.nodeDefinitions();
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(defs)) out[name] = nodeInfo(name, def);
  return respondJson(out, { headers: CACHE });
}

export async function getNodeClassInfo(request: Request, ctx: ServiceContext, cls: string): Promise<Response> {
  await cloudAccount(request, ctx);
  const defs = await ctx.engine.nodeDefinitions();
  // An unknown class is `{}`, as the reference answers it (clients test for an empty map, and some fail on a 404).
  if (!Object.hasOwn(defs, cls)) return respondJson({}, { headers: CACHE });
  return respondJson({ [cls]: nodeInfo(cls, defs[cls]) }, { headers: CACHE });
}
