// The cloud surface's flat, content-addressed file namespace: a file's name is
// the hex of its blake3 hash plus its extension, so the same bytes always get
// the same name, in every account, and a name says nothing about who has it.
// `/api/view`, the upload routes, history and WebSocket `executed` messages
// all speak these names; an account resolves a name only to its own assets.

import { dict } from '../../lib/dict.ts';
import { extensionForType } from '../../lib/media-extension.ts';
import type { AssetRecord } from '../../storage/types.ts';
import type { ServiceBase } from '../context.ts';

/** `.png` from `photo.PNG`; else from the media type; else none. At most 10 safe characters. */
export function extensionOf(fileName: string | null, contentType: string): string {
  const m = /\.([A-Za-z0-9]{1,10})$/.exec(fileName ?? '');
  if (m) return `.${m[1].toLowerCase()}`;
  return extensionForType(contentType);
}

/** The asset's name in the flat namespace; null while its hash is not known. */
export function cloudFileName(asset: Pick<AssetRecord, 'hash' | 'file_path' | 'content_type'>): string | null {
  if (!asset.hash) return null;
  return `${asset.hash.slice('blake3:'.length)}${extensionOf(asset.file_path, asset.content_type)}`;
}

const NAME = /^([0-9a-f]{64})(\.[a-z0-9]{1,10})?$/;

/** The blake3 hash a cloud file name stands for, or null if it is not one. */
export function hashOfFileName(name: string): string | null {
  const m = NAME.exec(name.toLowerCase());
  return m ? `blake3:${m[1]}` : null;
}

/**
 * The account's live asset a name stands for: by content hash for a cloud
 * name, else the newest with that file path (names the reference engine
 * gives, e.g. `ComfyUI_00001_.png`, used by clients that kept them).
 */
export async function findByFileName(ctx: Pick<ServiceBase, 'metadata' | 'now'>, accountId: string, name: string): Promise<AssetRecord | null> {
  const now = ctx.now();
  const hash = hashOfFileName(name);
  if (hash) {
    const [asset] = await ctx.metadata.listAssetsByHash(accountId, hash, now);
    if (asset) return asset;
  }
  return ctx.metadata.findAssetByPath(accountId, name, now);
}

/** The reference's key for an output kind in a node's ui dict. */
export function uiKeyOf(outputType: string | null): string {
  switch (outputType) {
    case 'image':
      return 'images';
    case 'video':
      return 'video';
    case 'audio':
      return 'audio';
    case 'text':
      return 'text';
    default:
      return 'files';
  }
}

/** A file reference `{filename, subfolder, type}` for an output asset, or a temporary file (`temp`). */
export function outputFileRef(asset: AssetRecord, type: 'output' | 'temp' = 'output'): { filename: string; subfolder: string; type: string } {
  return { filename: cloudFileName(asset) ?? asset.file_path ?? asset.id, subfolder: '', type };
}

/**
 * A job's outputs as the reference's `{node_id: ui}` map (history entries,
 * `executed` messages): each node's assets under the key of their kind, then
 * its temporary files (`temps`, e.g. PreviewImage's images) as `type: "temp"`.
 */
export function outputsByNode(assets: AssetRecord[], temps: AssetRecord[] = []): Record<string, Record<string, unknown[]>> {
  const out = dict<Record<string, unknown[]>>();
  for (const [list, type] of [
    [assets, 'output'],
    [temps, 'temp'],
  ] as const) {
    for (const asset of list) {
      const node = (out[asset.node_id ?? ''] ??= dict());
      (node[uiKeyOf(asset.output_type)] ??= []).push(outputFileRef(asset, type));
    }
  }
  return out;
}
