// Making directory entries durable: a new, renamed or removed entry survives
// a crash only once the directory holding it is synced.
import { close, fsync, open } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open as openHandle } from 'node:fs/promises';
import { promisify } from 'node:util';

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

const openFd = promisify(open);
const fsyncFd = promisify(fsync);
const closeFd = promisify(close);

/**
 * A directory kept open for many syncs, as a bare descriptor: a FileHandle
 * that nobody closes is closed by the garbage collector with a warning (an
 * error in later Node versions), and a store's owner may drop it unclosed.
 */
export interface KeptDir {
  sync(): Promise<void>;
  close(): Promise<void>;
}

export async function keepDir(path: string): Promise<KeptDir> {
  if (process.platform === 'win32') return { sync: async () => {}, close: async () => {} };
  const fd = await openFd(path, 'r');
  let closed = false;
  return {
    sync: () => fsyncFd(fd),
    async close() {
      if (closed) return;
      closed = true;
      await closeFd(fd);
    },
  };
}
