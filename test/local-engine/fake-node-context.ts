// A minimal NodeRunContext for node tests: in-memory input assets, and lists
// of what a node committed and previewed.
import { randomUUID } from 'node:crypto';
import type { NodeRunContext } from '../../engine/local/define-node.ts';
import type { OutputAsset, OutputType } from '../../engine/types.ts';

export interface FakeAsset {
  id: string;
  name: string;
  content_type: string;
  bytes: Uint8Array;
}

export function fakeContext(opts: { assets?: FakeAsset[]; settings?: Record<string, unknown>; signal?: AbortSignal } = {}) {
  const committed: { name: string; type: OutputType; content_type: string; body: Uint8Array; temporary?: boolean }[] = [];
  const previews: { bytes: Uint8Array; format: string }[] = [];
  const reads: { id?: string; name?: string }[] = [];
  const ctx: NodeRunContext = {
    node_id: '9',
    signal: opts.signal ?? new AbortController().signal,
    progress() {},
    preview(bytes, format) {
      previews.push({ bytes, format });
    },
    text() {},
    async commitOutput(o): Promise<OutputAsset> {
      if (!(o.body instanceof Uint8Array)) throw new Error('test fake expects bytes');
      committed.push({ ...o, body: o.body });
      return { id: randomUUID(), node_id: '9', name: o.name, type: o.type, content_type: o.content_type, size_bytes: o.body.length, hash: null };
    },
    async readAsset(ref) {
      reads.push(ref);
      const a = (opts.assets ?? []).find((x) => (ref.id ? x.id === ref.id : x.name === ref.name));
      if (!a) return null;
      return { id: a.id, content_type: a.content_type, size_bytes: a.bytes.length, body: new Blob([a.bytes]).stream() };
    },
    settings: opts.settings ?? {},
  };
  return { ctx, committed, previews, reads };
}
