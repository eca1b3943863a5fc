// The core and the local engine must run on any runtime: Web APIs only, so no
// `node:` module, no Node built-in by bare name, and no adapter or driver.
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const FORBIDDEN_PACKAGES = ['better-sqlite3', 'pg', 'ws', 'undici', 'express', 'kysely'];

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true }).catch(() => [])) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(rel)));
    else if (/\.(ts|js|mjs)$/.test(entry.name)) out.push(rel);
  }
  return out;
}

function importsOf(text: string): string[] {
  const re = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;
  return [...text.matchAll(re)].map((m) => m[1] ?? m[2] ?? m[3]);
}

describe('house rules', () => {
  it('core/ and engine/local import no runtime module, adapter or driver', async () => {
    const files = [...(await sources('core')), ...(await sources('engine/local'))];
    expect(files.length).toBeGreaterThan(10);
    const offences: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(await readFile(join(ROOT, file), 'utf8'))) {
        const bare = spec.split('/')[0];
        if (
          spec.startsWith('node:') ||
          builtinModules.includes(spec) ||
          FORBIDDEN_PACKAGES.includes(bare) ||
          /(^|\/)(adapters|storage\/(sql|fs))\//.test(spec)
        ) {
          offences.push(`${file}: ${spec}`);
        }
      }
    }
    expect(offences).toEqual([]);
  });

  it('the import scanner sees the forms it guards against', () => {
    expect(importsOf(`import { x } from 'node:fs';\nconst y = await import("ws");`)).toEqual(['node:fs', 'ws']);
  });
});
