// One prompt executing on the fake worker: the ExecutionContext handed to the
// local engine (files on the worker's disk) and the translation of the
// engine's events into the real server's WebSocket messages, in its order
// and with its fields (progress_state before executing/progress, executed
// then the node's finished progress_state, ...). Nodes served from the cache
// send no executing, only their executed again. A preview goes out only with
// a progress step of its node, as a sampler's does; other previews (the
// local PreviewImage's) the real server never sends. It also builds the
// history entry's outputs, meta and status messages.

import type { PreviewFormat } from '../../core/ws/frames.ts';
import type { NodeResult } from '../../engine/local/define-node.ts';
import type { EngineEvent, ExecutionContext, OutputAsset } from '../../engine/types.ts';
import type { PromptCache } from './comfyui-cache.ts';
import type { FileStore } from './comfyui-files.ts';
import type { InjectedReport, NodeObserver } from './comfyui-wrap-node.ts';

/**
 * What the fake sends: a JSON message, a preview, or progress text (binary
 * type 3). A preview goes `to` the clients that said supports_preview_metadata
 * (type 4, before the step's `progress`) or to the others (type 1, after it).
 */
export type WorkerMessage =
  | { kind: 'json'; type: string; data: Record<string, unknown> }
  | { kind: 'preview'; to: 'metadata' | 'plain'; node_id: string; prompt_id: string; format: PreviewFormat; bytes: Uint8Array }
  | { kind: 'text'; node_id: string; text: string };

type NodeState = { value: number; max: number; state: 'running' | 'finished' };

export interface PromptRun extends NodeObserver {
  readonly prompt_id: string;
  readonly ctx: ExecutionContext;
  /** Node running now (the reference's last_node_id), for a client reconnecting mid-prompt. */
  current: { node: string; class_type: string; inputs: Record<string, unknown> } | null;
  /** Nodes that ran to the end in this prompt. */
  executed: string[];
  outputs: Record<string, Record<string, unknown>>;
  meta: Record<string, Record<string, unknown>>;
  /** The history entry's `status.messages`: `[event, data]` of start, cached, success / error / interrupted. */
  messages: Array<[string, Record<string, unknown>]>;
  injected: InjectedReport | null;
  /** /interrupt: nodes that check see it at once, the engine at the next check (wrapNode). */
  interrupt(): void;
  /** Stops everything now (a crash). */
  abort(reason: unknown): void;
  /** Whether the prompt ended by an interrupt. */
  readonly interrupted: boolean;
  /** Sends (and records for history) a message of the prompt's lifecycle. */
  add(type: string, data: Record<string, unknown>): void;
  send(msg: WorkerMessage): void;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function collect(body: Uint8Array | AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return new Uint8Array(Buffer.concat(chunks));
}

export function createPromptRun(prompt_id: string, files: FileStore, cache: PromptCache, send: (msg: WorkerMessage) => void): PromptRun {
  const controller = new AbortController();
  const interrupts = new AbortController();
  const nodes = new Map<string, NodeState>();
  // Per node: the file names it asked for -> the names written (the counter moves on across prompts).
  const renames = new Map<string, Map<string, string>>();
  let cachedSent = false;
  let committed = 0;
  let preview: { node_id: string; format: PreviewFormat; bytes: Uint8Array } | null = null;

  const json = (type: string, data: Record<string, unknown>) => send({ kind: 'json', type, data });
  const progressState = () => {
    const out: Record<string, unknown> = {};
    for (const [id, n] of nodes) {
      out[id] = { value: n.value, max: n.max, state: n.state, node_id: id, prompt_id, display_node_id: id, parent_node_id: null, real_node_id: id };
    }
    json('progress_state', { prompt_id, nodes: out });
  };
  const finish = (node_id: string) => {
    const n = nodes.get(node_id) ?? { value: 1, max: 1, state: 'running' };
    nodes.set(node_id, { value: n.max, max: n.max, state: 'finished' });
    progressState();
  };
  const renameRefs = (node_id: string, value: unknown): unknown => {
    const map = renames.get(node_id);
    if (!map) return value;
    if (Array.isArray(value)) return value.map((v) => renameRefs(node_id, v));
    if (!isRecord(value)) return value;
    if (typeof value.filename === 'string' && map.has(value.filename)) return { ...value, filename: map.get(value.filename) };
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renameRefs(node_id, v)]));
  };
  const served = (node_id: string) => cache.get(node_id) !== undefined;
  const shown = (node_id: string, output: Record<string, unknown>) => {
    run.outputs[node_id] = output;
    run.meta[node_id] = { node_id, display_node: node_id, parent_node: null, real_node_id: node_id };
  };

  const run: PromptRun = {
    prompt_id,
    current: null,
    executed: [],
    outputs: {},
    meta: {},
    messages: [],
    injected: null,
    interruptSignal: interrupts.signal,
    get interrupted() {
      return controller.signal.aborted;
    },
    fromCache: (node_id) => cache.get(node_id),
    nodeStarted(node_id, class_type, inputs) {
      run.current = { node: node_id, class_type, inputs };
    },
    nodeFinished(node_id, result: NodeResult, hasUi) {
      run.executed.push(node_id);
      cache.keep(node_id, result.outputs);
      // A node with a ui is finished after its `executed` message (see emit).
      if (!hasUi) finish(node_id);
    },
    interrupt() {
      interrupts.abort(new DOMException('Interrupted', 'AbortError'));
    },
    takeInterrupt() {
      if (!interrupts.signal.aborted) return false;
      controller.abort(interrupts.signal.reason);
      return true;
    },
    abort(reason) {
      interrupts.abort(reason);
      controller.abort(reason);
    },
    add(type, data) {
      run.messages.push([type, data]);
      json(type, data);
    },
    send,
    ctx: {
      signal: controller.signal,
      emit(e: EngineEvent) {
        switch (e.type) {
          case 'execution_start':
            return run.add('execution_start', { prompt_id, timestamp: Date.now() });
          case 'cached':
            // The real server says it once, before any node runs, naming what its cache has (the engine's has nothing).
            if (!cachedSent) run.add('execution_cached', { nodes: [...cache.cached], prompt_id, timestamp: Date.now() });
            cachedSent = true;
            return;
          case 'executing':
            preview = null;
            if (served(e.node_id)) return;
            nodes.set(e.node_id, { value: 0, max: 1, state: 'running' });
            progressState();
            return json('executing', { node: e.node_id, display_node: e.node_id, prompt_id });
          case 'progress': {
            nodes.set(e.node_id, { value: e.value, max: e.max, state: 'running' });
            progressState();
            // As the real progress hook: the step's preview with metadata, the step, then the plain preview.
            const step = preview?.node_id === e.node_id ? preview : null;
            preview = null;
            if (step) send({ kind: 'preview', to: 'metadata', prompt_id, ...step });
            json('progress', { value: e.value, max: e.max, prompt_id, node: e.node_id });
            if (step) send({ kind: 'preview', to: 'plain', prompt_id, ...step });
            return;
          }
          case 'executed': {
            preview = null;
            if (served(e.node_id)) {
              // A cached node's ui again (the first run's file names), null when it showed nothing.
              const output = Object.keys(e.output).length > 0 ? e.output : null;
              if (output) shown(e.node_id, output);
              json('executed', { node: e.node_id, display_node: e.node_id, output, prompt_id });
              return finish(e.node_id);
            }
            const output = renameRefs(e.node_id, e.output) as Record<string, unknown>;
            // The real server only sends (and keeps) a non-empty ui.
            if (Object.keys(output).length > 0) {
              shown(e.node_id, output);
              cache.keepUi(e.node_id, output);
              json('executed', { node: e.node_id, display_node: e.node_id, output, prompt_id });
            }
            return finish(e.node_id);
          }
          case 'preview':
            preview = { node_id: e.node_id, format: e.format, bytes: e.bytes };
            return;
          case 'text':
            return send({ kind: 'text', node_id: e.node_id, text: e.text });
        }
      },
      async commitOutput(o): Promise<OutputAsset> {
        const bytes = await collect(o.body);
        const name = files.writeOutput(o.temporary ? 'temp' : 'output', o.name, bytes);
        if (!renames.has(o.node_id)) renames.set(o.node_id, new Map());
        renames.get(o.node_id)!.set(o.name, name);
        committed++;
        return {
          id: `${prompt_id}-${committed}`,
          node_id: o.node_id,
          name,
          type: o.type,
          content_type: o.content_type,
          size_bytes: bytes.byteLength,
          hash: null,
        };
      },
      async readAsset(ref) {
        const name = ref.name ?? ref.id;
        const bytes = name ? files.readInput(name) : null;
        if (!bytes) return null;
        return { id: name!, content_type: 'application/octet-stream', size_bytes: bytes.byteLength, body: new Blob([bytes]).stream() };
      },
    },
  };
  return run;
}
