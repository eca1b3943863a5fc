// Making directory entries durable: a new, renamed or removed entry survives
// a crash only once the directory holding it is synced.
import type { FileHandle } from 'node:fs/promises';
import { open as openHandle } from 'node:fs/promises';
import { type OpenFile, openFdFile } from './fd-file.ts';

/** A directory opened to be synced; null where directories cannot be opened for fsync (Windows). */
export async function openDir(path: string): Promise<FileHandle | null> {
  return process.platform === 'win32' ? null : openHandle(path, 'r');
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

/** A directory kept open for many syncs (as a bare descriptor: fd-file.ts). */
export type KeptDir = Pick<OpenFile, 'sync' | 'close'>;

export async function keepDir(path: string): Promise<KeptDir> {
  if (process.platform === 'win32') return { sync: async () => {}, close: async () => {} };
  return openFdFile(path, 'r');
}
