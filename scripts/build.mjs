// `npm run build`: the published package, ESM JavaScript and declarations
// compiled from the product code into dist/ (tsconfig.build.json says which
// folders). dist/ is emptied first, so a moved or deleted source leaves no
// stale file to be published. tsc rewrites the `.ts` of relative imports to
// `.js` in the JavaScript only; the declarations get the same rewrite here,
// so a consumer's tools resolve them as the files they ship next to.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

// `from './x.ts'`, `import('./x.ts')` and `import './x.ts'` with a relative specifier.
const RELATIVE_TS = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]*?)\.ts\2/g;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(RELATIVE_TS, '$1$2$3.js$2');
  if (rewritten !== text) writeFileSync(file, rewritten);
}
