// Lambda handler benchmark (npx tsx bench/adapters-lambda.ts): what a cold
// start of examples/lambda.ts costs and how big the deployed code is.
//  - Cold import: fresh `node --import tsx` processes, each with an empty
//    GRAPHRUN_DATA (a new execution environment's /tmp), timing the import
//    (module graph + top-level createService over SQLite) and the first
//    invocation; median of BENCH_RUNS (default 9). Baseline: a trivial
//    handler file imported the same way in the same run.
//  - The same with the esbuild bundle under plain `node`, as Lambda runs it.
//  - Bundled size: esbuild, minified, platform node, better-sqlite3 and pg external
//    (it ships as a dependency with its native module); bytes and gzip bytes,
//    and the largest inputs.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const WORK = join(ROOT, '.tmp', 'bench-lambda');

// The first request a function gets: a JSON GET of the API document, through API Gateway HTTP API.
const EVENT = {
  version: '2.0',
  routeKey: '$default',
  rawPath: '/api/v2/openapi.json',
  rawQueryString: '',
  headers: { host: 'id.execute-api.us-east-1.amazonaws.com', accept: 'application/json' },
  requestContext: { domainName: 'id.execute-api.us-east-1.amazonaws.com', http: { method: 'GET', path: '/api/v2/openapi.json' } },
  isBase64Encoded: false,
};

const CHILD = `
const t0 = performance.now();
const mod = await import(process.env.TARGET);
const t1 = performance.now();
const result = await mod.handler(JSON.parse(process.env.EVENT), { getRemainingTimeInMillis: () => 30000 });
const t2 = performance.now();
process.stdout.write(JSON.stringify({ importMs: t1 - t0, firstMs: t2 - t1, status: result.statusCode }));
process.exit(0);
`;

const TRIVIAL = `export const handler = async (event: { rawPath?: string }) => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: event.rawPath }) });\n`;

interface Sample {
  importMs: number;
  firstMs: number;
  wallMs: number;
}

function runChild(target: string, viaTsx: boolean): Promise<Sample> {
  return new Promise((resolve, reject) => {
    void mkdtemp(join(tmpdir(), 'graphrun-cold-')).then((data) => {
      const args = [...(viaTsx ? ['--import', 'tsx'] : []), '--input-type=module', '-e', CHILD];
      const started = performance.now();
      const child = spawn(process.execPath, args, {
        cwd: ROOT,
        env: { ...process.env, TARGET: pathToFileURL(target).href, EVENT: JSON.stringify(EVENT), GRAPHRUN_DATA: data },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      child.on('exit', (code) => {
        const wallMs = performance.now() - started;
        void rm(data, { recursive: true, force: true });
        if (code !== 0) return reject(new Error(`child exited ${code}: ${err}`));
        const parsed = JSON.parse(out) as { importMs: number; firstMs: number; status: number };
        if (parsed.status !== 200) return reject(new Error(`first invocation answered ${parsed.status}`));
        resolve({ importMs: parsed.importMs, firstMs: parsed.firstMs, wallMs });
      });
    }, reject);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(label: string, target: string, viaTsx: boolean): Promise<Sample> {
  const samples: Sample[] = [];
  // Alternating would interleave with the other target's disk cache; each target runs its own series.
  for (let i = 0; i < RUNS; i++) samples.push(await runChild(target, viaTsx));
  const m = {
    importMs: median(samples.map((s) => s.importMs)),
    firstMs: median(samples.map((s) => s.firstMs)),
    wallMs: median(samples.map((s) => s.wallMs)),
  };
  console.log(
    `  ${label.padEnd(34)} import ${m.importMs.toFixed(1).padStart(7)} ms   first invocation ${m.firstMs.toFixed(1).padStart(6)} ms   process ${m.wallMs.toFixed(0).padStart(5)} ms`,
  );
  return m;
}

async function bundle(entry: string, outfile: string) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3', 'pg'],
    // CommonJS dependencies call require(); an ESM bundle needs one made for it.
    banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
    metafile: true,
    write: false,
    logLevel: 'error',
  });
  const code = result.outputFiles[0].contents;
  await writeFile(outfile, code);
  const inputs = Object.entries(result.metafile.outputs)[0][1].inputs;
  const byPackage = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path.split('/')[0];
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
  }
  return { bytes: code.byteLength, gzip: gzipSync(code).byteLength, byPackage: [...byPackage].sort((a, b) => b[1] - a[1]) };
}

await rm(WORK, { recursive: true, force: true });
await mkdir(WORK, { recursive: true });
const trivialSource = join(WORK, 'trivial-handler.ts');
await writeFile(trivialSource, TRIVIAL);
const example = join(ROOT, 'examples', 'lambda.ts');

console.log(`Lambda handler: examples/lambda.ts (node ${process.version}, ${RUNS} cold processes each, medians)`);
console.log('\nBundled size (esbuild, minified, platform node, better-sqlite3 and pg external):');
const lambdaBundle = await bundle(example, join(WORK, 'lambda.mjs'));
const trivialBundle = await bundle(trivialSource, join(WORK, 'trivial.mjs'));
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
console.log(
  `  examples/lambda.ts    ${String(lambdaBundle.bytes).padStart(9)} bytes (${kb(lambdaBundle.bytes)}), gzip ${lambdaBundle.gzip} bytes (${kb(lambdaBundle.gzip)})`,
);
console.log(`  trivial handler       ${String(trivialBundle.bytes).padStart(9)} bytes, gzip ${trivialBundle.gzip} bytes`);
console.log(
  `  largest inputs: ${lambdaBundle.byPackage
    .slice(0, 6)
    .map(([p, b]) => `${p} ${kb(b)}`)
    .join(', ')}`,
);

console.log('\nCold import, source through tsx (node --import tsx):');
const tsxTrivial = await measure('trivial handler (baseline)', trivialSource, true);
const tsxLambda = await measure('examples/lambda.ts', example, true);
console.log('\nCold import, esbuild bundle under plain node (as deployed):');
const bundledTrivial = await measure('trivial handler bundle (baseline)', join(WORK, 'trivial.mjs'), false);
const bundledLambda = await measure('examples/lambda.ts bundle', join(WORK, 'lambda.mjs'), false);

console.log('\nAdded by graphrun over the trivial handler (median import + first invocation):');
const added = (a: Sample, b: Sample) => a.importMs + a.firstMs - (b.importMs + b.firstMs);
console.log(`  source via tsx  +${added(tsxLambda, tsxTrivial).toFixed(1)} ms`);
console.log(`  bundle          +${added(bundledLambda, bundledTrivial).toFixed(1)} ms`);
