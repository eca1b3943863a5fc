// /object_info as the real server writes it. Node classes written with its
// newer node API ("V3") carry every field of its NodeInfoV1 record, in that
// order: `output_tooltips`, `deprecated`, `experimental`, `api_node`, and a
// `display_name` that is null when the class gives none. Seeds go up to
// 2^64 - 1, which no JS number holds: a definition says U64_MAX and the body
// is written with the digits in its place.
import type { LocalNode } from '../../engine/local/define-node.ts';
import type { NodeDefinition } from '../../engine/types.ts';

/** Stands for 18446744073709551615 in a definition (validation of the fake leaves a non-number max unchecked). */
export const U64_MAX = 'U64_MAX:18446744073709551615';

export interface V3Fields {
  /** Null (the default) as the real server writes a V3 class without one. */
  display_name?: string | null;
  output_tooltips?: Array<string | null>;
  python_module?: string;
  deprecated?: boolean;
  experimental?: boolean;
  api_node?: boolean;
}

/** A node class as the real server describes one written with its V3 API. */
export function v3Node(node: LocalNode, fields: V3Fields = {}): LocalNode {
  const d = node.definition;
  const definition = {
    input: d.input,
    input_order: d.input_order,
    output: d.output,
    output_is_list: d.output_is_list,
    output_name: d.output_name,
    output_tooltips: fields.output_tooltips ?? d.output.map(() => null),
    name: d.name,
    display_name: fields.display_name ?? null,
    description: d.description,
    python_module: fields.python_module ?? 'comfy_extras.nodes_fake',
    category: d.category,
    output_node: d.output_node,
    deprecated: fields.deprecated ?? false,
    experimental: fields.experimental ?? false,
    api_node: fields.api_node ?? false,
  };
  // The type says display_name is a string: the real server's null is what the worker engine must take.
  return { ...node, definition: definition as unknown as NodeDefinition };
}

/** The JSON answer with U64_MAX written as its digits. */
export function objectInfoResponse(body: Record<string, unknown>): Response {
  const text = JSON.stringify(body).replaceAll(JSON.stringify(U64_MAX), U64_MAX.slice(U64_MAX.indexOf(':') + 1));
  return new Response(text, { headers: { 'content-type': 'application/json; charset=utf-8' } });
}
