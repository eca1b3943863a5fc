// A file as a bare descriptor with the few calls the fs store makes on the
// files it keeps open beyond one call (a writer's temp file opened ahead of
// use, a prefix directory kept for its syncs). A FileHandle that nobody
// closes is closed by the garbage collector with a warning (an error in later
// Node versions), and a store's owner may drop it unclosed; a descriptor is
// simply held until the process ends.
import { close, fsync, open, write } from 'node:fs';
import { promisify } from 'node:util';

const openFd = promisify(open);
const fsyncFd = promisify(fsync);
const closeFd = promisify(close);
const writeFd = promisify(write);

/** What the temp writer and the directory syncs need of an open file; FileHandle has the same shape. */
export interface OpenFile {
  write(data: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export async function openFdFile(path: string, flags: string | number, mode?: number): Promise<OpenFile> {
  const fd = await openFd(path, flags, mode);
  let closed = false;
  return {
    // Position null: at the file's current offset, as FileHandle.write without a position.
    write: (data, offset, length) => writeFd(fd, data, offset, length, null),
    sync: () => fsyncFd(fd),
    async close() {
      // Once only: a descriptor number closed twice may by then be another file's.
      if (closed) return;
      closed = true;
      await closeFd(fd);
    },
  };
}
