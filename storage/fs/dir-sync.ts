// Making directory entries durable: a new, renamed or removed entry survives
// a crash only once the directory holding it is synced.
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

/** A directory opened to be synced; null where directories cannot be opened for fsync (Windows). */
export async function openDir(path: string): Promise<FileHandle | null> {
  return process.platform === 'win32' ? null : open(path, 'r');
}

export async function syncOpened(fh: FileHandle | null): Promise<void> {
  if (!fh) return;
  try {
    await fh.sync();
  } finally {
    // Not awaited: the entry is durable once sync returns; closing a read-only handle changes nothing on disk.
    fh.close().catch(() => {});
  }
}

export const syncDir = async (path: string) => syncOpened(await openDir(path));
