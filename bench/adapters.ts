// Adapter overhead (npm run bench:adapters): requests/s of GET /api/v2/jobs/{id}
// (a succeeded job with one PNG output, SQLite + fs blobs) through each
// adapter on its own runtime, next to a bare server of that runtime sending
// the same status, headers and bytes, measured in the same run:
//   Node adapter vs bare node:http (the machine's Node), Express adapter vs a
//   bare Express route (when adapters/express exists), Bun adapter vs bare
//   Bun.serve, Deno adapter vs bare Deno.serve (their npm packages).
// Fairness: each runtime's adapter and its bare server live in one child
// process; the client is this Node process, the same for every target (an
// undici Pool of 32 connections, 32 loops each reading a whole response before
// the next request), windows in the order A B B A after a warm-up, the better
// of two windows counting. Before measuring, the two answers are compared.
// Server CPU per request (from /proc) is printed too: with two cores the
// client can be the limit, and then the rps ratio flatters the adapter.
// Then bench/adapters-lambda.ts, when present, prints the Lambda figures.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DENO, DENO_ENV, DENO_OFFLINE } from '../test/runtime/deno-env.ts';
import { CONNECTIONS, compare, cpuSeconds, type Window } from './adapters-load.ts';
import type { BenchReady } from './adapters-server.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TIMING = { warmupMs: 500, windowMs: 2_500 };
const TSX = ['--import', import.meta.resolve('tsx')];

interface Target {
  name: string;
  baseline: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Why the target is left out, if it is. */
  missing?: string;
}

const TARGETS: Target[] = [
  {
    name: `Node ${process.version} (adapters/node)`,
    baseline: 'bare node:http',
    command: process.execPath,
    args: [...TSX, 'bench/adapters-node.ts'],
  },
  {
    name: 'Express (adapters/express)',
    baseline: 'bare Express route',
    command: process.execPath,
    args: [...TSX, 'bench/adapters-node.ts', 'express'],
    missing: existsSync(join(ROOT, 'adapters/express/index.ts')) ? undefined : 'adapters/express does not exist',
  },
  { name: 'Bun (adapters/bun)', baseline: 'bare Bun.serve', command: join(ROOT, 'node_modules/.bin/bun'), args: ['bench/adapters-bun.ts'] },
  {
    name: 'Deno (adapters/deno)',
    baseline: 'bare Deno.serve',
    command: DENO,
    args: ['run', '-A', ...DENO_OFFLINE, 'bench/adapters-deno.ts'],
    env: DENO_ENV,
  },
];

async function start(target: Target, dir: string): Promise<{ child: ChildProcess; ready: BenchReady }> {
  const child = spawn(target.command, target.args, {
    cwd: ROOT,
    env: { ...process.env, ...target.env, GRAPHRUN_DATA: dir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = await new Promise<BenchReady>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no BENCH_READY within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /BENCH_READY (.+)\n/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(JSON.parse(m[1]) as BenchReady);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before it was ready:\n${output}`));
    });
  });
  return { child, ready };
}

const IGNORED = new Set(['date', 'connection', 'keep-alive']);

/** The adapter's and the bare server's answers: same status and bytes; header differences are returned. */
async function sameAnswer(ready: BenchReady): Promise<string[]> {
  const [a, b] = await Promise.all([fetch(`${ready.url}${ready.path}`), fetch(`${ready.bareUrl}${ready.path}`)]);
  const [ab, bb] = await Promise.all([a.arrayBuffer(), b.arrayBuffer()]);
  if (a.status !== b.status) throw new Error(`status ${a.status} vs bare ${b.status}`);
  if (Buffer.compare(Buffer.from(ab), Buffer.from(bb)) !== 0) throw new Error('the bare server does not send the same bytes');
  const headers = (r: Response) => new Map([...r.headers].filter(([k]) => !IGNORED.has(k)));
  const [ha, hb] = [headers(a), headers(b)];
  const names = new Set([...ha.keys(), ...hb.keys()]);
  return [...names].filter((n) => ha.get(n) !== hb.get(n)).map((n) => `${n}: ${ha.get(n) ?? '(none)'} vs bare ${hb.get(n) ?? '(none)'}`);
}

async function measure(target: Target): Promise<{ ready: BenchReady; adapter: Window; bare: Window; differences: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-adapters-'));
  let child: ChildProcess | undefined;
  try {
    const started = await start(target, dir);
    child = started.child;
    const differences = await sameAnswer(started.ready);
    const result = await compare(
      { adapter: started.ready.url, bare: started.ready.bareUrl },
      started.ready.path,
      () => cpuSeconds(started.child.pid!),
      TIMING,
    );
    return { ready: started.ready, ...result, differences };
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child!.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(kill);
    }
    await rm(dir, { recursive: true, force: true });
  }
}

const row = (cells: string[], widths = [34, 12, 34, 12, 8, 18]) =>
  console.log(cells.map((c, i) => (i === 0 || i === 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
const perRequest = (w: Window) => (Number.isNaN(w.serverCpu) ? 'n/a' : `${((w.serverCpu * 1e6) / w.rps).toFixed(0)} us`);

const began = performance.now();
console.log(
  `GET /api/v2/jobs/{id} through each adapter vs a bare server of its runtime sending the same answer;` +
    ` undici Pool of ${CONNECTIONS} connections, windows of ${TIMING.windowMs / 1000} s (A B B A, best of two)\n`,
);
row(['adapter', 'req/s', 'baseline', 'req/s', 'ratio', 'CPU/req (bare)']);
let failed = false;
for (const target of TARGETS) {
  if (target.missing) {
    console.log(`${target.name.padEnd(34)}  skipped: ${target.missing}`);
    continue;
  }
  try {
    const { ready, adapter, bare, differences } = await measure(target);
    row([
      target.name,
      adapter.rps.toFixed(0),
      target.baseline,
      bare.rps.toFixed(0),
      `${((adapter.rps / bare.rps) * 100).toFixed(1)} %`,
      `${perRequest(adapter)} (${perRequest(bare)})`,
    ]);
    const cpu = (w: Window) => (Number.isNaN(w.serverCpu) ? 'n/a' : `${(w.serverCpu * 100).toFixed(0)} %`);
    console.log(`${''.padEnd(36)}${ready.bytes} bytes, ${ready.outputs} output; server CPU ${cpu(adapter)} (bare ${cpu(bare)})`);
    for (const d of differences) console.log(`${''.padEnd(36)}header differs: ${d}`);
  } catch (err) {
    failed = true;
    console.log(`${target.name.padEnd(34)}  failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const lambda = join(ROOT, 'bench/adapters-lambda.ts');
if (existsSync(lambda)) {
  console.log('\nLambda (bench/adapters-lambda.ts):\n');
  const child = spawn(process.execPath, [...TSX, lambda], { cwd: ROOT, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) failed = true;
} else {
  console.log('\nLambda: skipped (bench/adapters-lambda.ts does not exist)');
}
console.log(`\ntotal ${((performance.now() - began) / 1000).toFixed(0)} s`);
process.exit(failed ? 1 : 0);
