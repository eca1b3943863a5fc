// The `output` of an `executed` message names files as the engine wrote them
// (`ComfyUI_00001_.png`); the cloud surface names them by content. Each
// `type: 'output'` reference is rewritten to the content-addressed name of the
// asset that node committed under that file name, so the name in the message
// is the one `/api/view` and history serve.

import { dict } from '../../lib/dict.ts';
import { isRecord } from '../../lib/is-record.ts';
import type { AssetRecord } from '../../storage/types.ts';
import { cloudFileName } from '../cloud/file-names.ts';

/** Deep enough for any ui dict; deeper values are passed through untouched. */
const MAX_DEPTH = 8;

/**
 * A copy of `output` with each output file reference of `nodeId` renamed.
 * `assets` are the outputs the job committed so far; each is matched once
 * (node and file path), in commit order. A reference without a matching
 * asset keeps its name.
 */
export function rewriteOutputRefs(output: Record<string, unknown>, nodeId: string, assets: readonly AssetRecord[]): Record<string, unknown> {
  const unused = assets.filter((a) => a.node_id === nodeId);
  if (unused.length === 0) return output;

  const rename = (ref: Record<string, unknown>): Record<string, unknown> => {
    const i = unused.findIndex((a) => a.file_path === ref.filename);
    if (i < 0) return ref;
    const [asset] = unused.splice(i, 1);
    const name = cloudFileName(asset);
    return name ? { ...ref, filename: name, subfolder: '' } : ref;
  };

  const walk = (value: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    if (!isRecord(value)) return value;
    if (value.type === 'output' && typeof value.filename === 'string') return rename(value);
    const out = dict<unknown>();
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, depth + 1);
    return out;
  };

  return walk(output, 0) as Record<string, unknown>;
}
