// BlobStore on a local directory. Objects live at `dir/ab/<key>`, `ab` the
// key's first two characters (256 prefix directories for the hex keys the
// service uses, few enough that most writes find theirs made; layout.ts moves
// a store of the older `dir/ab/cd/<key>` at open). Bytes are first written to
// `dir/.tmp/` and published with link(2), which is atomic and refuses to
// overwrite, so a reader never sees a partial object and concurrent writers
// of one key agree on a single winner. Assumes one process owns `dir` (its
// .tmp is wiped at start) and a filesystem with hard links and case-sensitive
// names.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, link, mkdir, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BLOB_KEY, checkBlobKey } from '../blob-key.ts';
import { checkByteRange } from '../byte-range.ts';
import type { BlobStore } from '../types.ts';
import { type KeptDir, keepDir, syncDir } from './dir-sync.ts';
import { type OpenFile, openFdFile } from './fd-file.ts';
import { fileStream } from './file-stream.ts';
import { ensureFlatLayout } from './layout.ts';
import { createTempWriter } from './temp-writer.ts';

export interface FsBlobStoreOptions {
  dir: string;
}

export type FsBlobStore = BlobStore & {
  /** Paths of the temporary objects on disk: in-flight writers' (and leaks, in tests); not the one opened ahead for the next writer. */
  tempFiles(): Promise<string[]>;
  /** How many tempFiles there are. */
  tempCount(): Promise<number>;
  /** Lets go of what the store keeps open (its prefix directories' handles, the temp file opened ahead); writes must have ended. */
  close(): Promise<void>;
};

const errCode = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code;
const ignore = (code: string) => (e: unknown) => {
  if (errCode(e) !== code) throw e;
};

/** Flags of a new temp file whose writes are durable when they return (where the platform has O_DSYNC). */
const DURABLE_CREATE = constants.O_DSYNC === undefined ? undefined : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DSYNC;

export async function createFsBlobStore({ dir }: FsBlobStoreOptions): Promise<FsBlobStore> {
  const tmpDir = join(dir, '.tmp');
  // Whatever is in .tmp now was left by a crash: no writer of ours holds it.
  await rm(tmpDir, { recursive: true, force: true });
  await mkdir(tmpDir, { recursive: true });
  await ensureFlatLayout(dir, tmpDir, (name) => BLOB_KEY.test(name));

  const pathOf = (key: string) => {
    checkBlobKey(key);
    return join(dir, key.slice(0, 2), key);
  };

  // Prefix directories made by this process, each once: `made` when it
  // exists, `durable` when its entry in `dir` is synced. A writer links once
  // `made` and returns only after `durable`, so that sync overlaps its own;
  // one that finds the directory being made waits for the same promises,
  // never for less. One entry per prefix (256 for hex keys); the store never
  // removes a directory. `handle`: the directory opened for its syncs, once,
  // and kept until close: opening and closing it for each object were two of
  // the eight trips through the thread pool that storing a small object took.
  interface Prefix {
    made: Promise<void>;
    durable: Promise<void>;
    handle?: Promise<KeptDir>;
  }
  const dirs = new Map<string, Prefix>();
  /** Forgets a prefix directory that failed or went away; resolves once its handle is closed. */
  function forget(parent: string, entry: Prefix): Promise<void> {
    if (dirs.get(parent) === entry) dirs.delete(parent);
    const closed = (entry.handle ?? Promise.resolve(null)).then((kept) => kept?.close()).catch(() => {});
    entry.handle = undefined;
    return closed;
  }
  function prefixDir(parent: string): Prefix {
    let entry = dirs.get(parent);
    if (!entry) {
      // Not recursive: `dir` itself gone is a failure to report, not a directory to make again unsynced.
      const created = mkdir(parent).then(
        () => true,
        (e: unknown) => {
          if (errCode(e) !== 'EEXIST') throw e;
          return false;
        },
      );
      const durable = created.then(async (isNew) => {
        if (isNew) await syncDir(dir);
      });
      const made: Prefix = { made: created.then(() => undefined), durable };
      entry = made;
      dirs.set(parent, made);
      durable.catch(() => void forget(parent, made));
    }
    return entry;
  }
  /** The prefix directory's handle for syncs, opened once it exists; a failed open is tried again by the next writer. */
  function handleOf(parent: string, entry: Prefix): Promise<KeptDir> {
    if (!entry.handle) {
      const opened = entry.made.then(() => keepDir(parent));
      entry.handle = opened;
      opened.catch(() => {
        if (entry.handle === opened) entry.handle = undefined;
      });
    }
    return entry.handle;
  }

  // The next writer's temp file, opened ahead: each begin takes it and opens
  // the one after in the background, so creating a file (a trip through the
  // thread pool, and through the file system's journal: from a tenth of a
  // millisecond to about one here) is off the writer's way. While it waits it
  // is no writer's, and tempFiles leaves it out.
  let spare: { name: string; file: Promise<OpenFile> } | undefined;
  const openTemp = (name: string) => openFdFile(join(tmpDir, name), DURABLE_CREATE ?? 'wx', 0o666);
  function nextSpare(): void {
    const name = randomBytes(16).toString('hex');
    const file = openTemp(name);
    file.catch(() => {}); // the writer that takes it sees the failure
    spare = { name, file };
  }

  async function tempFiles(): Promise<string[]> {
    const waiting = spare?.name;
    return (await readdir(tmpDir)).filter((name) => name !== waiting).map((name) => join(tmpDir, name));
  }

  return {
    location: pathToFileURL(resolve(dir)).href,
    async begin() {
      const taken = spare;
      nextSpare();
      // None yet, or its open failed (perhaps for a moment only): this writer's own open decides.
      const own = async () => {
        const name = randomBytes(16).toString('hex');
        return { name, fh: await openTemp(name) };
      };
      const { name, fh } = taken ? await taken.file.then((fh) => ({ name: taken.name, fh }), own) : await own();
      const tmpPath = join(tmpDir, name);
      const file = { fh, durableWrites: DURABLE_CREATE !== undefined, reopen: () => open(tmpPath, 'r+') };
      return createTempWriter(file, tmpPath, checkBlobKey, async (key, durable) => {
        const final = pathOf(key);
        const parent = dirname(final);
        // The directory is made while the bytes are synced; nothing links before both are done.
        // Its handle is ready meanwhile too (opened by the first writer), so after the link only its sync is left.
        let place = prefixDir(parent);
        let opened = handleOf(parent, place);
        opened.catch(() => {});
        try {
          await Promise.all([place.made, durable]);
          await link(tmpPath, final).catch(async (e: unknown) => {
            if (errCode(e) !== 'ENOENT') throw e;
            // The directory was removed behind our back: make it again (and sync the new one, not the old).
            await forget(parent, place);
            place = prefixDir(parent);
            opened = handleOf(parent, place);
            opened.catch(() => {});
            await place.made;
            await link(tmpPath, final);
          });
        } catch (e) {
          await place.durable.catch(() => {});
          if (errCode(e) !== 'EEXIST') throw e;
          await unlink(tmpPath);
          return false; // another writer published it first
        }
        // The new entry and its directory's own entry must be durable before the caller records the blob.
        await Promise.all([opened.then((kept) => kept.sync()), place.durable, unlink(tmpPath)]);
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

    async *list() {
      // dir/ab/<key>, .tmp and .layout beside the prefix directories (not objects).
      for (const a of await readdir(dir).catch(() => [])) {
        if (a.length !== 2) continue;
        for (const key of await readdir(join(dir, a)).catch(() => [])) {
          // A name outside its key's directory is no object: get would never find it.
          if (!BLOB_KEY.test(key) || !key.startsWith(a)) continue;
          // Gone between the listing and the stat (collected meanwhile): not an object any more.
          const info = await stat(join(dir, a, key)).catch(() => null);
          if (info?.isFile()) yield { key, modified_at: info.mtimeMs };
        }
      }
    },

    tempFiles,
    tempCount: async () => (await tempFiles()).length,

    async close() {
      const entries = [...dirs.values()];
      const left = spare;
      dirs.clear();
      spare = undefined;
      await Promise.all([
        ...entries.map(async (entry) => (await entry.handle?.catch(() => null))?.close()),
        left?.file.then(
          async (fh) => {
            await fh.close();
            await unlink(join(tmpDir, left.name)).catch(() => {});
          },
          () => {},
        ),
      ]);
    },
  };
}
