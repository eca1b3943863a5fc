// The local engine's node registry: the node classes an engine instance can
// run, looked up by class_type, and listed as the object_info map the service
// serves and validates submissions against.
import type { NodeDefinition } from '../types.ts';
import type { DefinitionOf } from '../validate-workflow.ts';
import type { LocalNode } from './define-node.ts';

export interface NodeRegistry {
  get(classType: string): LocalNode | undefined;
  /** All definitions keyed by class name, in registration order (object_info). */
  definitions(): Readonly<Record<string, NodeDefinition>>;
  list(): LocalNode[];
  /** A class's definition, what validation reads. */
  definitionOf: DefinitionOf;
}

export function createRegistry(nodes: LocalNode[]): NodeRegistry {
  const byName = new Map<string, LocalNode>();
  for (const node of nodes) {
    // Two classes of one name would make a workflow's meaning depend on load order.
    if (byName.has(node.definition.name)) throw new Error(`duplicate node class: ${node.definition.name}`);
    byName.set(node.definition.name, node);
  }
  // The classes are fixed at creation, and every submission and run reads the map: one map, shared by all readers.
  const definitions = Object.freeze(Object.fromEntries([...byName].map(([name, node]) => [name, node.definition])));
  return {
    get: (classType) => byName.get(classType),
    definitions: () => definitions,
    list: () => [...byName.values()],
    definitionOf: (classType) => byName.get(classType)?.definition,
  };
}
