// The fs blob store's layout on disk, and the move from the old one. Stores
// used to keep objects at `dir/ab/cd/<key>`; with fewer blobs than its 65,536
// leaf directories, most writes made a directory (and synced two), so objects
// now live at `dir/ab/<key>`. `dir/.layout` saying `flat` records that the
// move is done; until then every open finishes it, so a crash part way loses
// nothing. Keys are 4 characters or more, so an object's name never clashes
// with an old 2-character subdirectory.
import type { Dirent } from 'node:fs';
import { open, readdir, readFile, rename, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from './dir-sync.ts';

const MARKER = '.layout';
const FLAT = 'flat';

const errCode = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code;

const prefixDirs = (entries: Dirent[]) => entries.filter((e) => e.name.length === 2 && e.isDirectory()).map((e) => e.name);

/**
 * Brings `dir` to the flat layout before the store uses it. `isKey` says
 * which names are objects; `tmpDir` is the store's own, wiped at open, so a
 * marker half written by a crash never outlives it.
 */
export async function ensureFlatLayout(dir: string, tmpDir: string, isKey: (name: string) => boolean): Promise<void> {
  const marker = join(dir, MARKER);
  const found = await readFile(marker, 'utf8').catch((e: unknown) => {
    if (errCode(e) === 'ENOENT') return null;
    throw e;
  });
  if (found?.trim() === FLAT) return;
  // Written only by a version that knows a layout this one does not: reading it as ours could lose objects.
  if (found !== null) throw new Error(`unknown blob store layout in ${marker}: ${JSON.stringify(found.slice(0, 40))}`);

  for (const a of prefixDirs(await readdir(dir, { withFileTypes: true }))) {
    const top = join(dir, a);
    const legacy = prefixDirs(await readdir(top, { withFileTypes: true }));
    await Promise.all(legacy.map((b) => flatten(join(top, b), top, a + b, isKey)));
    // Synced even with nothing left to move: an earlier open may have moved it all and stopped before its sync.
    await syncDir(top);
  }

  const tmp = join(tmpDir, MARKER);
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(FLAT);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, marker);
  await syncDir(dir);
}

/** Moves the objects of one old leaf directory up into `top` and removes the leaf if that emptied it. */
async function flatten(leaf: string, top: string, prefix: string, isKey: (name: string) => boolean): Promise<void> {
  const names = (await readdir(leaf, { withFileTypes: true }))
    // A name not starting with its leaf's prefix was never reachable by its key: not an object, left alone.
    .filter((e) => e.isFile() && isKey(e.name) && e.name.startsWith(prefix))
    .map((e) => e.name);
  // A name already in `top` holds the same bytes (keys are content hashes), so replacing it loses nothing.
  await Promise.all(names.map((name) => rename(join(leaf, name), join(top, name))));
  await rmdir(leaf).catch((e: unknown) => {
    // Something that is not an object stays, and so does its directory.
    if (errCode(e) !== 'ENOTEMPTY' && errCode(e) !== 'EEXIST') throw e;
  });
}
