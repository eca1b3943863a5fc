// A job's files on its worker, committed node by node: when the worker says
// a node showed them (its `executed` message) and, at the end, from the
// history entry for whatever the messages missed. Each worker file is
// committed once per run. A run after a lost worker makes the files again,
// under other names (each worker counts its own): a file whose node and bytes
// are those of an output an earlier run committed IS that output, so it is
// committed under that output's name and the store keeps one (the same node,
// name and bytes are the same output); any other file is new. The node's ui
// comes back with each file named as committed, which is what /ws and history
// turn into content-addressed names.
import { createBLAKE3 } from 'hash-wasm';
import type { ExecutionContext, OutputAsset } from '../types.ts';
import { withView } from './fetch-output.ts';
import { type FileRef, fileRefsOf, renameRefs, textsOf } from './output-files.ts';
import type { WorkerClient } from './worker-client.ts';

export interface NodeOutputs {
  /** Commits what of this node's ui is not committed yet; returns the ui with the committed names. */
  commit(node_id: string, ui: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export interface NodeOutputsOptions {
  client: WorkerClient;
  ctx: ExecutionContext;
  /** Stops fetching: the job was canceled, timed out or lost its worker. */
  signal: AbortSignal;
  /** Outputs earlier runs of the job committed. */
  earlier: readonly OutputAsset[];
  /** Each output (not temporary file) this run committed or found committed. */
  onCommitted(asset: OutputAsset): void;
}

const refKey = (r: Pick<FileRef, 'node_id' | 'folder' | 'subfolder' | 'filename'>) => `${r.node_id}\0${r.folder}\0${r.subfolder}\0${r.filename}`;

async function blake3Of(body: AsyncIterable<Uint8Array>): Promise<string> {
  const hasher = await createBLAKE3();
  hasher.init();
  for await (const chunk of body) hasher.update(chunk);
  return `blake3:${hasher.digest('hex')}`;
}

export function createNodeOutputs(opts: NodeOutputsOptions): NodeOutputs {
  const { client, ctx, signal } = opts;
  const done = new Map<string, Promise<OutputAsset>>();
  /** Earlier outputs a file of this run turned out to be: each stands for one file only. */
  const claimed = new Set<string>();
  const encoder = new TextEncoder();

  function once(key: string, temporary: boolean, make: () => Promise<OutputAsset>): Promise<OutputAsset> {
    let p = done.get(key);
    if (!p) {
      p = make().then((asset) => {
        if (!temporary) opts.onCommitted(asset);
        return asset;
      });
      done.set(key, p);
      p.catch(() => done.delete(key));
    }
    return p;
  }

  /** The earlier output this file is: same node, same size, then same bytes (hashed only then). */
  async function earlierTwin(ref: FileRef, where: { filename: string; subfolder: string; type: string }): Promise<OutputAsset | null> {
    const open = () => opts.earlier.filter((a) => a.node_id === ref.node_id && !claimed.has(a.id));
    if (ref.temporary || open().length === 0) return null;
    const twin = await withView(client, where, signal, async (file) => {
      const sized = open().filter((a) => file.size === null || a.size_bytes === file.size);
      if (sized.length === 0) return null;
      const hash = await blake3Of(file.body);
      return sized.find((a) => a.hash === hash) ?? null;
    });
    if (twin) claimed.add(twin.id);
    return twin;
  }

  async function commitFile(ref: FileRef): Promise<OutputAsset> {
    const where = { filename: ref.filename, subfolder: ref.subfolder, type: ref.folder };
    const twin = await earlierTwin(ref, where);
    return withView(client, where, signal, async (file) => {
      const served = file.content_type?.split(';')[0].trim();
      const content_type = ref.content_type === 'application/octet-stream' && served ? served : ref.content_type;
      return ctx.commitOutput({
        node_id: ref.node_id,
        name: twin?.name ?? ref.filename,
        type: ref.type,
        content_type,
        body: file.body,
        temporary: ref.temporary || undefined,
      });
    });
  }

  return {
    async commit(node_id, ui) {
      const refs = fileRefsOf({ [node_id]: ui });
      const names = new Map<string, string>();
      for (const ref of refs) {
        signal.throwIfAborted();
        const asset = await once(refKey(ref), ref.temporary, () => commitFile(ref));
        names.set(refKey(ref), asset.name);
      }
      // A node that saved files shows what it saved; only a node with nothing else to give has its text kept.
      if (refs.length === 0) {
        for (const [, index, text] of textsOf({ [node_id]: ui })) {
          signal.throwIfAborted();
          const name = `text_${node_id.replace(/[^\w.-]/g, '_')}_${index}.txt`;
          await once(`${node_id}\0text\0${index}`, false, () =>
            ctx.commitOutput({ node_id, name, type: 'text', content_type: 'text/plain; charset=utf-8', body: encoder.encode(text) }),
          );
        }
      }
      return renameRefs(node_id, ui, (ref) => names.get(refKey(ref)) ?? null);
    },
  };
}
