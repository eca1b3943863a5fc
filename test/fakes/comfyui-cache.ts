// The fake worker's node cache, as the real server's default ("classic")
// cache: a node's key is its class, whether it changed (a file it loads, by
// its bytes; never equal for a node whose result is not a function of its
// inputs), its inputs as given and its ancestors' keys, not its id. Output
// nodes are cached too, so an identical prompt runs nothing and shows the
// first run's files again. At each prompt's start every entry whose key that
// prompt does not use is dropped: only what consecutive prompts share is
// served.
import { createHash, randomUUID } from 'node:crypto';
import type { LocalNode, NodeResult } from '../../engine/local/define-node.ts';
import type { Workflow } from '../../engine/types.ts';
import { readInput } from '../../engine/workflow-graph.ts';

export interface PromptCache {
  /** Nodes of the prompt served from the cache, in the prompt's order (execution_cached). */
  readonly cached: string[];
  get(node_id: string): NodeResult | undefined;
  /** A node ran to the end: its outputs are kept. */
  keep(node_id: string, outputs: unknown[]): void;
  /** What a node that ran showed (as sent in `executed`), kept with its outputs. */
  keepUi(node_id: string, ui: Record<string, unknown>): void;
}

export interface NodeCache {
  /** The cache as a prompt starting now sees it (entries it does not use are dropped). */
  begin(prompt: Workflow): PromptCache;
  clear(): void;
}

export function createNodeCache(opts: {
  classOf(class_type: string): LocalNode | undefined;
  /** An input file's bytes by name (what LoadImage reads); null when absent. */
  readInput(name: string): Uint8Array | null;
}): NodeCache {
  const entries = new Map<string, NodeResult>();

  // The reference's IS_CHANGED: upload inputs hash the file they name; a node that is not cacheable never matches.
  function changed(node: Workflow[string]): unknown {
    const cls = opts.classOf(node.class_type);
    if (!cls) return randomUUID();
    const specs = { ...cls.definition.input.required, ...cls.definition.input.optional };
    const uploads = Object.entries(specs).filter(([, spec]) => Object.entries(spec[1] ?? {}).some(([k, v]) => /(^|_)upload$/.test(k) && v));
    if (uploads.length > 0) return uploads.map(([name]) => digest(opts.readInput(String(node.inputs[name] ?? '')) ?? new Uint8Array()));
    return cls.cacheable ? null : randomUUID();
  }

  function keysOf(prompt: Workflow): Map<string, string> {
    const keys = new Map<string, string>();
    const visiting = new Set<string>();
    const keyOf = (id: string): string => {
      const known = keys.get(id);
      if (known) return known;
      // A missing node, or one in a cycle, is never served from the cache.
      if (!Object.hasOwn(prompt, id) || visiting.has(id)) return randomUUID();
      visiting.add(id);
      const node = prompt[id];
      const inputs = Object.keys(node.inputs ?? {})
        .sort()
        .map((name) => {
          const value = readInput(node.inputs[name]);
          return value.kind === 'link' ? [name, 'ANCESTOR', keyOf(value.link[0]), value.link[1]] : [name, node.inputs[name]];
        });
      visiting.delete(id);
      const key = digest(new TextEncoder().encode(JSON.stringify([node.class_type, changed(node), inputs])));
      keys.set(id, key);
      return key;
    };
    for (const id of Object.keys(prompt)) keyOf(id);
    return keys;
  }

  return {
    begin(prompt) {
      const keys = keysOf(prompt);
      const used = new Set(keys.values());
      for (const key of [...entries.keys()]) if (!used.has(key)) entries.delete(key);
      const cached = Object.keys(prompt).filter((id) => entries.has(keys.get(id)!));
      const served = new Set(cached);
      return {
        cached,
        // Only what was cached when the prompt started: a twin that ran in this prompt is the engine's business.
        get: (node_id) => (served.has(node_id) ? entries.get(keys.get(node_id)!) : undefined),
        keep(node_id, outputs) {
          const key = keys.get(node_id);
          if (key) entries.set(key, { outputs });
        },
        keepUi(node_id, ui) {
          const entry = entries.get(keys.get(node_id) ?? '');
          if (entry) entry.ui = ui;
        },
      };
    },
    clear: () => entries.clear(),
  };
}

const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
