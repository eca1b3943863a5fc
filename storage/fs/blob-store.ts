// BlobStore on a local directory. Objects live at `dir/ab/cd/<key>` (the
// prefixes keep directories small); bytes are first written to `dir/.tmp/`
// and published with link(2), which is atomic and refuses to overwrite, so a
// reader never sees a partial object and concurrent writers of one key agree
// on a single winner. Assumes one process owns `dir` (its .tmp is wiped at
// start) and a filesystem with hard links and case-sensitive names.
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readdir, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkByteRange } from '../byte-range.ts';
import type { BlobStore } from '../types.ts';
import { fileStream } from './file-stream.ts';
import { createTempWriter } from './temp-writer.ts';

export interface FsBlobStoreOptions {
  dir: string;
}

export type FsBlobStore = BlobStore & {
  /** Temporary objects currently on disk: in-flight writers (and leaks, in tests). */
  tempCount(): Promise<number>;
};

/** Keys become path segments, so no dot, slash or backslash may ever get through. */
const KEY = /^[A-Za-z0-9_-]{4,128}$/;

function checkKey(key: string): void {
  if (!KEY.test(key)) throw new TypeError(`invalid blob key: ${JSON.stringify(key)}`);
}

const errCode = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code;
const ignore = (code: string) => (e: unknown) => {
  if (errCode(e) !== code) throw e;
};

async function syncDir(path: string): Promise<void> {
  if (process.platform === 'win32') return; // directories cannot be opened for fsync there
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export async function createFsBlobStore({ dir }: FsBlobStoreOptions): Promise<FsBlobStore> {
  const tmpDir = join(dir, '.tmp');
  // Whatever is in .tmp now was left by a crash: no writer of ours holds it.
  await rm(tmpDir, { recursive: true, force: true });
  await mkdir(tmpDir, { recursive: true });

  const pathOf = (key: string) => {
    checkKey(key);
    return join(dir, key.slice(0, 2), key.slice(2, 4), key);
  };

  return {
    async begin() {
      const tmpPath = join(tmpDir, randomBytes(16).toString('hex'));
      return createTempWriter(await open(tmpPath, 'wx'), tmpPath, checkKey, async (key) => {
        const final = pathOf(key);
        const parent = dirname(final);
        const created = await mkdir(parent, { recursive: true });
        try {
          await link(tmpPath, final);
        } catch (e) {
          if (errCode(e) === 'EEXIST') return false; // another writer published it first
          throw e;
        }
        // The new directory entries must be durable before the caller records the blob.
        await syncDir(parent);
        if (created !== undefined) {
          await syncDir(dirname(parent));
          await syncDir(dir);
        }
        return true;
      });
    },

    async get(key, range) {
      const path = pathOf(key);
      if (range) checkByteRange(range);
      let fh: FileHandle;
      try {
        fh = await open(path, 'r');
      } catch (e) {
        if (errCode(e) === 'ENOENT') return null;
        throw e;
      }
      return fileStream(fh, range?.start ?? 0, range ? range.end + 1 : Infinity);
    },

    async has(key) {
      try {
        return (await stat(pathOf(key))).isFile();
      } catch (e) {
        if (errCode(e) === 'ENOENT') return false;
        throw e;
      }
    },

    async delete(key) {
      await unlink(pathOf(key)).catch(ignore('ENOENT'));
    },

    async tempCount() {
      return (await readdir(tmpDir)).length;
    },
  };
}
