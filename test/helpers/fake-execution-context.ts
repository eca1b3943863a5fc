// A fake ExecutionContext for engine tests: records every event, keeps
// committed outputs (bytes collected) and serves input assets from a map.
// Optionally aborts itself when an event matches, to cancel at a precise point.
import type { EngineEvent, ExecutionContext, OutputAsset } from '../../engine/types.ts';

export interface CommittedOutput extends OutputAsset {
  bytes: Uint8Array;
  /** Committed as a temporary file (a preview), not an output. */
  temporary?: boolean;
}

export interface FakeInputAsset {
  id: string;
  name: string;
  content_type: string;
  bytes: Uint8Array;
}

export interface FakeExecutionContext {
  ctx: ExecutionContext;
  controller: AbortController;
  events: EngineEvent[];
  outputs: CommittedOutput[];
  /** Event types in order, e.g. ['execution_start', 'cached', 'executing', ...]. */
  types(): string[];
  /** Events of one type, narrowed. */
  of<T extends EngineEvent['type']>(type: T): Array<Extract<EngineEvent, { type: T }>>;
}

export function createFakeExecutionContext(
  opts: { assets?: FakeInputAsset[]; abortWhen?: (event: EngineEvent) => boolean } = {},
): FakeExecutionContext {
  const controller = new AbortController();
  const events: EngineEvent[] = [];
  const outputs: CommittedOutput[] = [];
  const ctx: ExecutionContext = {
    signal: controller.signal,
    emit(event) {
      events.push(event);
      if (opts.abortWhen?.(event)) controller.abort();
    },
    async commitOutput({ body, ...output }) {
      const bytes = await collect(body);
      const asset = { ...output, id: `asset-${outputs.length + 1}`, size_bytes: bytes.byteLength, hash: null, bytes };
      outputs.push(asset);
      const { bytes: _, ...rest } = asset;
      return rest;
    },
    async readAsset(ref) {
      const a = opts.assets?.find((x) => (ref.id !== undefined && x.id === ref.id) || (ref.name !== undefined && x.name === ref.name));
      if (!a) return null;
      return { id: a.id, content_type: a.content_type, size_bytes: a.bytes.byteLength, body: new Blob([a.bytes]).stream() };
    },
  };
  return {
    ctx,
    controller,
    events,
    outputs,
    types: () => events.map((e) => e.type),
    of: <T extends EngineEvent['type']>(type: T) => events.filter((e): e is Extract<EngineEvent, { type: T }> => e.type === type),
  };
}

async function collect(body: Uint8Array | AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  if (body instanceof Uint8Array) return body.slice();
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}
