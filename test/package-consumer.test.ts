// The package as a user gets it: `npm pack` (whose prepack builds dist/), the
// tarball installed with npm into a fresh project in a temporary directory,
// then used there: the README's server on plain node (upload, job, output),
// a strict nodenext TypeScript project over every entry with skipLibCheck
// off, the installed `graphrun` executable; and what the tarball holds.
// npm reuses its cache; better-sqlite3 compiles from source on install, so
// the install gets minutes, not the default 30 s.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const FIXTURE = new URL('./fixtures/package-consumer/', import.meta.url).pathname;
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// A bound, not a wait: node-gyp builds better-sqlite3 here, over 10 minutes when both cores are already busy.
const INSTALL_TIMEOUT_MS = 20 * 60_000;

/** This environment as a fresh shell has it: without what npm sets for the test run (npm_* would point npm at this repository). */
function shellEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('npm_') && name !== 'INIT_CWD' && name !== 'NODE_OPTIONS') env[name] = value;
  }
  return env;
}

interface Child {
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
  /** The first match of `re` in stdout; rejects with the output when the process exits first. */
  line(re: RegExp): Promise<RegExpExecArray>;
  stop(): Promise<number | null>;
}

const children: ReturnType<typeof spawn>[] = [];

function start(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Child {
  const child = spawn(command, args, { cwd, env: { ...shellEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waiting: Array<() => void> = [];
  child.stdout!.on('data', (d) => {
    stdout += d;
    for (const check of waiting) check();
  });
  child.stderr!.on('data', (d) => (stderr += d));
  return {
    exited,
    output: () => ({ stdout, stderr }),
    line: (re) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(stdout);
          if (m) resolve(m);
        };
        waiting.push(check);
        check();
        void exited.then((code) => reject(new Error(`${command} ${args.join(' ')} exited ${code} before printing ${re}:\n${stdout}\n${stderr}`)));
      }),
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const child = start(command, args, cwd, env);
  const code = await child.exited;
  return { code, ...child.output() };
}

/** Fails with the command's output unless it exited 0. */
function succeeded(result: { code: number | null; stdout: string; stderr: string }, what: string): string {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

interface PackedFile {
  path: string;
  size: number;
}

let dir: string;
let app: string;
let packed: { filename: string; size: number; unpackedSize: number; entryCount: number; files: PackedFile[] };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'graphrun-package-'));
  app = join(dir, 'app');
  const pack = succeeded(await run('npm', ['pack', '--json', '--pack-destination', dir], ROOT), 'npm pack');
  packed = JSON.parse(pack)[0];

  await cp(FIXTURE, app, { recursive: true });
  const manifest = { name: 'graphrun-consumer', private: true, type: 'module', allowScripts: { 'better-sqlite3': true } };
  await writeFile(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  // The @types/node this repository is checked with, so npm's cache has it.
  const typesNode = JSON.parse(await readFile(join(ROOT, 'node_modules/@types/node/package.json'), 'utf8')).version as string;
  const tarball = join(dir, packed.filename);
  // JOBS: node-gyp compiles better-sqlite3 on both cores.
  const install = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `@types/node@${typesNode}`], app, {
    JOBS: '2',
  });
  succeeded(install, 'npm install <tarball>');
}, INSTALL_TIMEOUT_MS);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds the build, the bin, README and LICENSE: no sources, tests, benches, examples or source maps', async () => {
    const paths = packed.files.map((f) => f.path);
    const besideDist = paths.filter((p) => !p.startsWith('dist/'));
    expect(besideDist.sort()).toEqual(['LICENSE', 'README.md', 'bin/graphrun.js', 'package.json']);
    const unwanted = paths.filter(
      (p) => /(^|\/)(test|tests|bench|examples|fixtures)\//.test(p) || (/\.[cm]?tsx?$/.test(p) && !/\.d\.[cm]?ts$/.test(p)) || p.endsWith('.map'),
    );
    expect(unwanted).toEqual([]);

    // Every entry resolves to files the tarball holds, types next to code.
    const manifest = JSON.parse(await readFile(join(app, 'node_modules/graphrun/package.json'), 'utf8'));
    const targets = Object.values(manifest.exports as Record<string, { types: string; import: string }>).flatMap((t) => [t.types, t.import]);
    expect(targets.length).toBe(2 * Object.keys(manifest.exports).length);
    expect(targets.filter((t) => !/^\.\/dist\/.+\.(d\.ts|js)$/.test(t) || !paths.includes(t.slice(2)))).toEqual([]);
    expect(paths).toContain(manifest.bin.graphrun.replace(/^\.\//, ''));

    // Nothing of the TypeScript tool chain is needed at run time.
    expect(Object.keys(manifest.dependencies)).not.toContain('tsx');
    expect(existsSync(join(app, 'node_modules/tsx'))).toBe(false);

    // The declarations import the .js files shipped beside them, as the code does (not the .ts sources, which are not shipped).
    const declarations = (await readdir(join(app, 'node_modules/graphrun/dist'), { recursive: true })).filter((f) => f.endsWith('.d.ts'));
    expect(declarations.length).toBeGreaterThan(10);
    const tsImports: string[] = [];
    for (const file of declarations) {
      const text = await readFile(join(app, 'node_modules/graphrun/dist', file), 'utf8');
      for (const m of text.matchAll(/['"](\.\.?\/[^'"]*\.ts)['"]/g)) tsImports.push(`${file}: ${m[1]}`);
    }
    expect(tsImports).toEqual([]);
  });

  it("runs on plain node as the README's library section shows: uploads an asset, runs a job, serves its output", async () => {
    const server = start(process.execPath, ['server.mjs'], app);
    const [, base] = await server.line(/listening on (http:\/\/\S+)/);

    const form = new FormData();
    form.set('file', new Blob(['consumer bytes']), 'notes.txt');
    form.set('content_type', 'text/plain');
    form.set('file_path', 'in/notes.txt');
    const upload = await fetch(`${base}/api/v2/assets`, { method: 'POST', body: form });
    const asset = (await upload.json()) as { id: string; size_bytes: number };
    expect({ status: upload.status, size: asset.size_bytes }).toEqual({ status: 201, size: 14 });
    const content = await fetch(`${base}/api/v2/assets/${asset.id}/content`);
    expect(await content.text()).toBe('consumer bytes');

    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 0 } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 't' } },
    };
    const submit = await fetch(`${base}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow }),
    });
    let job = (await submit.json()) as { id: string; status: string; outputs?: { url: string }[]; error?: unknown };
    expect(submit.status, JSON.stringify(job)).toBe(201);
    // Polling GET, as a client without the event stream does; bounded by the test's timeout.
    while (!['succeeded', 'failed', 'canceled', 'expired'].includes(job.status)) {
      await delay(20);
      job = (await (await fetch(`${base}/api/v2/jobs/${job.id}`)).json()) as typeof job;
    }
    expect({ status: job.status, error: job.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(job.outputs).toHaveLength(1);
    const output = await fetch(new URL(job.outputs![0].url, base));
    expect(output.status).toBe(200);
    expect([...new Uint8Array(await output.arrayBuffer()).subarray(0, 8)]).toEqual(PNG_SIGNATURE);

    await server.stop();
  }, 60_000);

  it('type-checks a strict nodenext TypeScript project using every entry, skipLibCheck off, without @types of its dependencies', async () => {
    expect(existsSync(join(app, 'node_modules/@types/express'))).toBe(false);
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], app);
    expect({ code: result.code, errors: result.stdout }).toEqual({ code: 0, errors: '' });
  }, 120_000);

  it('installs a `graphrun` executable that serves on plain node', async () => {
    const cli = start(process.execPath, [join(app, 'node_modules/.bin/graphrun'), 'serve', '--port', '0', '--data', join(dir, 'cli-data')], app);
    const [, url] = await cli.line(/graphrun listening on (http:\/\/\S+)/);
    const res = await fetch(`${url}/api/v2/openapi.json`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { openapi?: string }).openapi).toMatch(/^3\./);
    expect(await cli.stop()).toBe(0);
  }, 60_000);
});
