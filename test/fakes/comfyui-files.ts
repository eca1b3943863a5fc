// The fake worker's files on disk, laid out like the real server's: input/
// (uploads, what LoadImage reads), output/ (SaveImage), temp/ (PreviewImage).
// Path checks, upload naming and output naming follow the real server.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, normalize, relative, resolve } from 'node:path';

export type FileType = 'input' | 'output' | 'temp';

export interface FileStore {
  readonly root: string;
  dir(type: FileType): string;
  /**
   * Where a `/view` request points: 400 for a filename starting with `/` or
   * containing `..`, 403 for a subfolder escaping its base, else the path
   * (which may not exist).
   */
  locate(type: string, subfolder: string, filename: string): { status: 400 | 403 } | { path: string; name: string };
  /** `/upload/image`: returns the name the file is kept under (reference's naming rule). */
  upload(type: FileType, subfolder: string, filename: string, bytes: Uint8Array, overwrite: boolean): string | null;
  /** An output file of a node: a free name like the real SaveImage's counter (`prefix_00002_.png`). */
  writeOutput(type: 'output' | 'temp', requested: string, bytes: Uint8Array): string;
  /** An input file by name (`sub/name.png` or `name.png [input]` accepted); null when absent. */
  readInput(name: string): Uint8Array | null;
  list(type: FileType): string[];
}

const within = (base: string, path: string) => {
  const rel = relative(base, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export function createFileStore(root: string): FileStore {
  const dirs: Record<FileType, string> = { input: join(root, 'input'), output: join(root, 'output'), temp: join(root, 'temp') };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  const typeDir = (type: string): string | null => (type in dirs ? dirs[type as FileType] : null);

  return {
    root,
    dir: (type) => dirs[type],
    locate(type, subfolder, filename) {
      if (!filename || filename.startsWith('/') || filename.includes('..')) return { status: 400 };
      const base = typeDir(type || 'output');
      if (!base) return { status: 400 };
      const folder = resolve(base, subfolder || '.');
      if (!within(base, folder)) return { status: 403 };
      const name = basename(filename);
      return { path: join(folder, name), name };
    },
    upload(type, subfolder, filename, bytes, overwrite) {
      const base = dirs[type];
      const folder = resolve(base, normalize(subfolder || '.'));
      let path = resolve(folder, filename);
      if (!filename || !within(base, path)) return null;
      mkdirSync(folder, { recursive: true });
      const dot = filename.lastIndexOf('.');
      const [stem, ext] = dot > 0 ? [filename.slice(0, dot), filename.slice(dot)] : [filename, ''];
      let name = filename;
      if (!overwrite) {
        // As the real server: walk `stem (i).ext` until a free name or one holding identical bytes.
        const digest = sha(bytes);
        for (let i = 1; existsSync(path); i++) {
          if (sha(readFileSync(path)) === digest) return name;
          name = `${stem} (${i})${ext}`;
          path = join(folder, name);
        }
      }
      writeFileSync(path, bytes);
      return name;
    },
    writeOutput(type, requested, bytes) {
      const dir = dirs[type];
      const safe = basename(requested) || 'output';
      let name = safe;
      const counter = /^(.*)_(\d{5})_(\.[^.]+)$/.exec(safe);
      if (counter) {
        // The real SaveImage scans the folder for the prefix's highest counter and takes the next one.
        const [, prefix, , ext] = counter;
        let n = Number(counter[2]);
        while (existsSync(join(dir, `${prefix}_${String(n).padStart(5, '0')}_${ext}`))) n++;
        name = `${prefix}_${String(n).padStart(5, '0')}_${ext}`;
      } else {
        const dot = safe.lastIndexOf('.');
        const [stem, ext] = dot > 0 ? [safe.slice(0, dot), safe.slice(dot)] : [safe, ''];
        for (let i = 1; existsSync(join(dir, name)); i++) name = `${stem}_${i}${ext}`;
      }
      writeFileSync(join(dir, name), bytes);
      return name;
    },
    readInput(ref) {
      const name = ref.replace(/\s*\[input\]$/, '').trim();
      if (!name || name.startsWith('/') || name.includes('..')) return null;
      const path = join(dirs.input, name);
      if (!within(dirs.input, path) || !existsSync(path) || !statSync(path).isFile()) return null;
      return new Uint8Array(readFileSync(path));
    },
    list: (type) =>
      readdirSync(dirs[type], { recursive: true })
        .map(String)
        .filter((f) => statSync(join(dirs[type], f)).isFile()),
  };
}
