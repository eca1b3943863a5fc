// Saves a finished job's outputs into a directory: each from
// GET /api/v2/assets/{id}/content (which may redirect to a signed URL),
// streamed to disk under the output's own file name. A name already there
// is never overwritten: "-1", "-2"... go before the extension instead, so
// runs into the same directory keep every result.
import { mkdir, open, rm } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Api } from './api.ts';
import { apiErrorOf } from './errors.ts';
import type { Output } from './types.ts';

export interface SavedOutput {
  id: string;
  node_id: string;
  path: string;
}

/** The output's name without any directory part (a server's name never picks a place on this machine). */
function fileNameOf(output: Output): string {
  const name = basename(output.name.replace(/\\/g, '/')).replace(/[\0]/g, '');
  return name === '' || name === '.' || name === '..' ? output.id : name;
}

/** Creates the first free name of `dir/name`, `dir/name-1.ext`, ...; returns its path and an open handle. */
async function createFree(dir: string, name: string) {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 0; ; n++) {
    const path = join(dir, n === 0 ? name : `${stem}-${n}${ext}`);
    try {
      return { path, handle: await open(path, 'wx') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

export async function downloadOutputs(api: Api, outputs: Output[], dir: string, signal?: AbortSignal): Promise<SavedOutput[]> {
  await mkdir(dir, { recursive: true });
  const saved: SavedOutput[] = [];
  for (const output of outputs) {
    const url = `/api/v2/assets/${encodeURIComponent(output.id)}/content`;
    const res = await api.fetch(url, { signal });
    if (!res.ok || !res.body) throw await apiErrorOf(res, `GET ${url}`);
    const { path, handle } = await createFree(dir, fileNameOf(output));
    try {
      await pipeline(Readable.fromWeb(res.body), handle.createWriteStream(), { signal });
    } catch (err) {
      // No half-written file left under a name that looks complete.
      await rm(path, { force: true });
      throw err;
    }
    saved.push({ id: output.id, node_id: output.node_id, path });
  }
  return saved;
}
