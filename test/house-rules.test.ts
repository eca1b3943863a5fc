// The architecture as the imports show it, enforced:
// - core/, lib/, engine/local and providers/local run on any runtime: Web
//   APIs only, so no `node:` module, no Node built-in by bare name, and no
//   adapter or driver; the Bun and Deno adapters likewise; storage/s3 no
//   Node module either.
// - lib/ imports nothing of ours.
// - core/ depends on interfaces (storage, engine, providers), never on an
//   implementation, an adapter or the package entry that picks defaults.
// - interfaces depend on interfaces and lib/ only.
// - implementations depend on core/'s types (type-only imports), never on
//   its code, on an adapter or on another implementation.
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const DRIVERS = ['better-sqlite3', 'pg', 'ws', 'undici', 'express', 'kysely', 'aws4fetch'];

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true }).catch(() => [])) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(rel)));
    else if (/\.(ts|js|mjs)$/.test(entry.name)) out.push(rel);
  }
  return out;
}

interface Import {
  spec: string;
  /** `import type` / `export type`: erased, no dependency at run time. */
  typeOnly: boolean;
}

function importsOf(text: string): Import[] {
  const re =
    /(?:^|[;\n])\s*(import|export)(\s+type)?\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)|(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g;
  return [...text.matchAll(re)].map((m) => ({ spec: m[3] ?? m[4] ?? m[5] ?? m[6], typeOnly: m[2] !== undefined }));
}

/** The repository path an import of `file` points at, or null for a package. */
const target = (file: string, spec: string) => (spec.startsWith('.') ? normalize(join(dirname(file), spec)) : null);

const isRuntimeModule = (spec: string) => spec.startsWith('node:') || builtinModules.includes(spec) || DRIVERS.includes(spec.split('/')[0]);

/** The interfaces the core may depend on: the files at the root of storage/interfaces, engine and providers. */
const isInterface = (path: string) =>
  path === 'storage/types.ts' || /^storage\/interfaces\/[^/]+\.ts$/.test(path) || path === 'engine/types.ts' || /^providers\/[^/]+\.ts$/.test(path);

/** An implementation of an interface: a folder under storage/, engine/ or providers/. */
const implementationOf = (path: string) => /^(storage\/(?!interfaces\/)[^/]+|engine\/[^/]+|providers\/[^/]+)\//.exec(path)?.[1] ?? null;

async function offences(dirs: string[], rule: (file: string, imp: Import, to: string | null) => string | null): Promise<string[]> {
  const found: string[] = [];
  for (const dir of dirs) {
    for (const file of await sources(dir)) {
      for (const imp of importsOf(await readFile(join(ROOT, file), 'utf8'))) {
        const why = rule(file, imp, target(file, imp.spec));
        if (why) found.push(`${file}: ${imp.spec} (${why})`);
      }
    }
  }
  return found;
}

describe('house rules', () => {
  it('core/, lib/, engine/local, providers/local and the Bun and Deno adapters import no runtime module, adapter or driver', async () => {
    const dirs = ['core', 'lib', 'engine/local', 'providers/local', 'adapters/bun', 'adapters/deno'];
    expect((await Promise.all(dirs.map(sources))).flat().length).toBeGreaterThan(100);
    const found = await offences(dirs, (file, { spec }, to) => {
      if (isRuntimeModule(spec)) return 'a runtime module or driver';
      if (to?.startsWith('adapters/') && !file.startsWith('adapters/')) return 'an adapter';
      if (to?.startsWith('adapters/node/')) return 'the Node adapter';
      return null;
    });
    expect(found).toEqual([]);
  });

  it('storage/s3 imports no Node module: the S3 blob store runs on Lambda, Bun and Deno as it is', async () => {
    expect((await sources('storage/s3')).length).toBeGreaterThan(3);
    const found = await offences(['storage/s3'], (_file, { spec }) =>
      spec.startsWith('node:') || builtinModules.includes(spec) ? 'a Node module' : null,
    );
    expect(found).toEqual([]);
  });

  it('lib/ imports nothing of ours', async () => {
    const found = await offences(['lib'], (_file, _imp, to) => (to !== null && !to.startsWith('lib/') ? 'outside lib/' : null));
    expect(found).toEqual([]);
  });

  it('core/ depends on interfaces and lib/, never on an implementation, an adapter or the package entry', async () => {
    const found = await offences(['core'], (_file, _imp, to) => {
      if (to === null || to.startsWith('core/') || to.startsWith('lib/') || isInterface(to)) return null;
      return 'not an interface';
    });
    expect(found).toEqual([]);
  });

  it('interfaces depend on interfaces and lib/ only', async () => {
    const files = ['storage/types.ts', 'engine/types.ts', ...(await sources('storage/interfaces')), ...(await sources('providers'))].filter(
      isInterface,
    );
    expect(files.length).toBeGreaterThan(8);
    const found: string[] = [];
    for (const file of files) {
      for (const imp of importsOf(await readFile(join(ROOT, file), 'utf8'))) {
        const to = target(file, imp.spec);
        if (to !== null && !isInterface(to) && !to.startsWith('lib/')) found.push(`${file}: ${imp.spec}`);
      }
    }
    expect(found).toEqual([]);
  });

  it("implementations use core/'s types only, and no adapter, package entry or other implementation", async () => {
    const found = await offences(['storage', 'engine', 'providers'], (file, { typeOnly }, to) => {
      const own = implementationOf(file);
      if (own === null || to === null) return null;
      if (to.startsWith('core/')) return typeOnly ? null : "core/'s code (import its types only)";
      if (to.startsWith('adapters/') || to === 'index.ts') return 'an adapter or the package entry';
      const other = implementationOf(to);
      if (other !== null && other !== own) return 'another implementation';
      return null;
    });
    expect(found).toEqual([]);
  });

  it('the import scanner sees the forms it guards against', () => {
    const text = `import { x } from 'node:fs';\nimport type { T } from '../core/types.ts';\nexport type * from './a.ts';\nconst y = await import("ws");\nimport './side.ts';`;
    expect(importsOf(text)).toEqual([
      { spec: 'node:fs', typeOnly: false },
      { spec: '../core/types.ts', typeOnly: true },
      { spec: './a.ts', typeOnly: true },
      { spec: 'ws', typeOnly: false },
      { spec: './side.ts', typeOnly: false },
    ]);
    expect(isInterface('providers/music.ts') && isInterface('storage/interfaces/job-store.ts') && !isInterface('providers/local/index.ts')).toBe(
      true,
    );
    expect([implementationOf('storage/sql/sqlite.ts'), implementationOf('providers/upstream/http.ts'), implementationOf('storage/types.ts')]).toEqual(
      ['storage/sql', 'providers/upstream', null],
    );
  });
});
