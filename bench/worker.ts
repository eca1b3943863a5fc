// Worker engine benchmark (npm run bench:worker): what graphrun adds to a job
// that runs on engine workers. BENCH_JOBS jobs (default 500) of a small image
// workflow (EmptyImage 64x64 -> SaveImage) go to 2 fake workers
// (bench/worker-fakes.ts, a child process) three ways, in the same run:
// - through graphrun (bench/worker-server.ts, another child process: the Node
//   server on SQLite + fs blobs, the worker engine on the two workers), as a
//   v2 client: submit, then follow the job's SSE stream to its terminal status;
// - through the bare relay floor (bench/worker-floor-server.ts, a child process
//   like graphrun's): a hand-written relay with no database, no validation and
//   no graphrun code that serves the same two v2 routes to the same client,
//   runs each job on a free worker, and fsyncs its output to a file before the
//   terminal status. It is the least any relay costs on this machine: what
//   graphrun adds above it is graphrun's own, what it adds below it is not;
// - straight to the workers (the baseline), as the engine's example client
//   does: POST /prompt, follow /ws to the end, GET /history and /view (graphrun
//   and the floor skip /history when their socket heard the whole run).
// All keep 2 jobs in flight (one per worker slot). Each path's jobs run in two
// halves, in the order direct, graphrun, floor, floor, graphrun, direct: every
// path's halves sit symmetrically about the middle of the run, so a machine
// that drifts (warming up, slowing down) over the run weighs on all three
// alike, and a slow moment lands on one half of one path, not on a whole path.
// Printed: wall time and jobs/s of each path, graphrun's ratio to direct,
// per-job latency (submit -> done) p50/p99 of each, server CPU per job of
// graphrun and of the floor (their process's CPU time over their halves), and
// the latency each relay adds (differences of the percentiles): graphrun -
// direct, floor - direct, graphrun - floor.
// Targets: graphrun adds under 5 ms at p50 (graphrun - direct), and its server
// spends under 5 ms of CPU per job.
// graphrun's server runs the built package (npm run build first, then its
// exports by name), as an application that installed it does: what is shipped
// is what is measured. BENCH_FROM=source runs the TypeScript sources through
// tsx instead (no build), as a check of the sources at hand.
// BENCH_STORAGE=memory (both halves; or sqlite+memory-blobs, memory+fs-blobs)
// runs graphrun with that part of its storage in memory: what SQLite and the blob files each
// add per job. The targets judge the default, sqlite+fs-blobs, where the job's small output is
// a row of the database (SQLite's inline blobs); sqlite+fs-blobs-only stores it as a file.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  benchFrom,
  benchStorage,
  type DirectWorker,
  imageWorkflow,
  openDirect,
  runThroughGraphrun,
  STORAGES,
  type Workflow,
} from './worker-clients.ts';
import type { FakesMessage, FakesRequest } from './worker-fakes.ts';
import type { ServerMessage, ServerRequest } from './worker-server.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 500);
// V8 keeps optimizing a server's code over its first several hundred jobs: graphrun's CPU per job
// falls from about 10.5 to 8 ms over its first 2,000 here, the floor's from 4 to 2 ms. The targets
// are about a server that has been up for a while, so each path warms up this long first; the
// relays' CPU per job during their warm-up is printed too.
const WARMUP_JOBS = Number(process.env.BENCH_WARMUP ?? 1000);
const WORKERS = 2;
const IN_FLIGHT = 2;
const TARGET_P50_MS = 5;
const TARGET_CPU_MS = 5;

if (!Number.isInteger(JOBS) || JOBS < 2) {
  console.error(`BENCH_JOBS must be a whole number of at least 2, got "${process.env.BENCH_JOBS}".`);
  process.exit(2);
}
let STORAGE: (typeof STORAGES)[number];
let FROM: ReturnType<typeof benchFrom>;
try {
  STORAGE = benchStorage();
  FROM = benchFrom();
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
// The server loads the package as it is built from these sources now (npm run build, into dist/).
if (FROM === 'package') execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url))], { stdio: 'inherit' });
if (!Number.isInteger(WARMUP_JOBS) || WARMUP_JOBS < 2) {
  console.error(`BENCH_WARMUP must be a whole number of at least 2, got "${process.env.BENCH_WARMUP}".`);
  process.exit(2);
}

interface Child<Req, Msg> {
  child: ChildProcess;
  ready: Promise<Msg>;
  ask(message: Req): Promise<Msg>;
  stop(): Promise<void>;
}

function start<Req extends { type: string }, Msg extends { type: string }>(script: string, args: string[], profile = false): Child<Req, Msg> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  // BENCH_CPU_PROF=<dir>: graphrun's server writes a V8 CPU profile there when it stops.
  const prof = profile && process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = fork(path, args, { execArgv: [...prof, '--import', import.meta.resolve('tsx')], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () =>
    new Promise<Msg>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${script} exited (${code})`));
      child.once('message', (m) => {
        child.off('exit', onExit);
        const message = m as Msg & { message?: string };
        if (message.type === 'error') reject(new Error(`${script}: ${message.message}`));
        else resolve(message);
      });
      child.once('exit', onExit);
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    ready: next(),
    ask: (message) => (child.send(message), next()),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Batch {
  latencies: number[];
  wallMs: number;
}

/** Resolves when the job is done; may hand back what is left to do before the next job (not timed). */
type Runner = (wf: Workflow) => Promise<void | (() => Promise<void>)>;

/** Runs every workflow with one loop per runner, all at once. */
async function batch(workflows: Workflow[], runners: Runner[]): Promise<Batch> {
  const latencies: number[] = [];
  let next = 0;
  const began = performance.now();
  await Promise.all(
    runners.map(async (run) => {
      while (next < workflows.length) {
        const wf = workflows[next++];
        const t0 = performance.now();
        const rest = await run(wf);
        latencies.push(performance.now() - t0);
        if (rest) await rest();
      }
    }),
  );
  return { latencies, wallMs: performance.now() - began };
}

/** A batch through a relay (graphrun or the floor): the prompts each worker took, the relay's CPU time. */
interface Relayed extends Batch {
  perWorker: number[];
  cpuMs: number;
}

const join2 = (a: Batch, b: Batch): Batch => ({ latencies: [...a.latencies, ...b.latencies], wallMs: a.wallMs + b.wallMs });
const joinRelayed = (a: Relayed, b: Relayed): Relayed => ({
  ...join2(a, b),
  perWorker: a.perWorker.map((n, i) => n + b.perWorker[i]),
  cpuMs: a.cpuMs + b.cpuMs,
});
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

// Every job's color is new to the workers, so none of their nodes is served from a cache.
let color = 0;
const workflows = (n: number) => Array.from({ length: n }, () => imageWorkflow(++color));

const temps: string[] = [];
const began = performance.now();
let fakes: Child<FakesRequest, FakesMessage> | undefined;
let server: Child<ServerRequest, ServerMessage> | undefined;
let floor: Child<ServerRequest, ServerMessage> | undefined;
let direct: DirectWorker[] = [];
try {
  fakes = start<FakesRequest, FakesMessage>('./worker-fakes.ts', [String(WORKERS)]);
  const ready = await fakes.ready;
  if (ready.type !== 'ready') throw new Error('the workers did not start');
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-worker-'));
  temps.push(dir);
  server = start<ServerRequest, ServerMessage>('./worker-server.ts', [dir, ...ready.urls], true);
  const up = await server.ready;
  if (up.type !== 'ready') throw new Error('graphrun did not start');
  const floorDir = await mkdtemp(join(tmpdir(), 'graphrun-bench-worker-floor-'));
  temps.push(floorDir);
  floor = start<ServerRequest, ServerMessage>('./worker-floor-server.ts', [floorDir, ...ready.urls]);
  const floorUp = await floor.ready;
  if (floorUp.type !== 'ready') throw new Error('the floor did not start');
  direct = await Promise.all(ready.urls.map(openDirect));

  const viaGraphrun: Runner[] = Array.from({ length: IN_FLIGHT }, () => (wf) => runThroughGraphrun(up.url, wf));
  const viaFloor: Runner[] = Array.from({ length: IN_FLIGHT }, () => (wf) => runThroughGraphrun(floorUp.url, wf));
  const straight: Runner[] = Array.from({ length: IN_FLIGHT }, (_, k) => (wf) => direct[k % direct.length].run(wf));
  const counts = async () => {
    const m = await fakes!.ask({ type: 'counts' });
    if (m.type !== 'counts') throw new Error('counts expected');
    return m.prompts;
  };
  const cpu = async (relay: Child<ServerRequest, ServerMessage>) => {
    const m = await relay.ask({ type: 'cpu' });
    if (m.type !== 'cpu') throw new Error('cpu expected');
    return m.micros;
  };
  /** A batch through a relay, with the prompts each worker took and the relay's CPU time (ms) meanwhile. */
  const relayed = async (relay: Child<ServerRequest, ServerMessage>, runners: Runner[], n: number): Promise<Relayed> => {
    const [countsBefore, cpuBefore] = [await counts(), await cpu(relay)];
    const b = await batch(workflows(n), runners);
    const [countsAfter, cpuAfter] = [await counts(), await cpu(relay)];
    return { ...b, perWorker: countsAfter.map((c, i) => c - countsBefore[i]), cpuMs: (cpuAfter - cpuBefore) / 1000 };
  };

  await batch(workflows(WARMUP_JOBS), straight);
  const warmG = await relayed(server, viaGraphrun, WARMUP_JOBS);
  const warmF = await relayed(floor, viaFloor, WARMUP_JOBS);
  // Halves in the order direct, graphrun, floor, floor, graphrun, direct (see the header).
  const first = Math.floor(JOBS / 2);
  const second = JOBS - first;
  const d1 = await batch(workflows(first), straight);
  const g1 = await relayed(server, viaGraphrun, first);
  const f1 = await relayed(floor, viaFloor, first);
  const f2 = await relayed(floor, viaFloor, second);
  const g2 = await relayed(server, viaGraphrun, second);
  const d2 = await batch(workflows(second), straight);
  const [g, f, d] = [joinRelayed(g1, g2), joinRelayed(f1, f2), join2(d1, d2)];
  for (const b of [g, f, d]) b.latencies.sort((x, y) => x - y);
  report(g, f, d, [warmG, warmF]);
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  for (const d of direct) d.close();
  await floor?.stop();
  await server?.stop();
  await fakes?.stop();
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
}
console.log(`\ntotal ${((performance.now() - began) / 1000).toFixed(0)} s`);
process.exit();

function report(g: Relayed, f: Relayed, d: Batch, warm: [Relayed, Relayed]): void {
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const row = (label: string, ...cells: string[]) => console.log(`  ${label.padEnd(30)}${cells.map((c) => c.padEnd(21)).join('')}`);
  const jps = (b: Batch) => b.latencies.length / (b.wallMs / 1000);
  const p50 = (b: Batch) => percentile(b.latencies, 50);
  const p99 = (b: Batch) => percentile(b.latencies, 99);
  const cpuPerJob = (b: Relayed) => b.cpuMs / b.latencies.length;
  const added50 = p50(g) - p50(d);
  const verdict = (v: number, target: number) => `< ${target} ms  ${v < target ? 'PASS' : 'FAIL'}`;
  console.log(
    `\nworker: ${JOBS} jobs (EmptyImage 64x64 -> SaveImage, one PNG output) per path on ${WORKERS} fake workers in a child process,` +
      ` ${IN_FLIGHT} in flight (one per worker slot), after ${WARMUP_JOBS} warm-up jobs each;` +
      ' halves in the order direct, graphrun, floor, floor, graphrun, direct;' +
      ` graphrun on ${STORAGE}${STORAGE === STORAGES[0] ? '' : ' (BENCH_STORAGE: the targets judge sqlite+fs-blobs)'},` +
      ` from ${FROM === 'package' ? 'the built package (dist/, as installed)' : 'the sources through tsx (BENCH_FROM=source)'}\n`,
  );
  row('', 'graphrun (v2+SSE)', 'floor (bare relay)', 'direct (baseline)', 'graphrun - direct', 'target');
  row('jobs', String(g.latencies.length), String(f.latencies.length), String(d.latencies.length));
  row('wall time', ...[g, f, d].map((b) => `${(b.wallMs / 1000).toFixed(2)} s`));
  row('throughput', ...[g, f, d].map((b) => `${jps(b).toFixed(1)} jobs/s`), `ratio ${((jps(g) / jps(d)) * 100).toFixed(1)} %`);
  row('latency per job, p50', ms(p50(g)), ms(p50(f)), ms(p50(d)), ms(added50), verdict(added50, TARGET_P50_MS));
  row('latency per job, p99', ms(p99(g)), ms(p99(f)), ms(p99(d)), ms(p99(g) - p99(d)));
  row('server CPU per job', ms(cpuPerJob(g)), ms(cpuPerJob(f)), '-', '', verdict(cpuPerJob(g), TARGET_CPU_MS));
  row('  the same during warm-up', ms(cpuPerJob(warm[0])), ms(cpuPerJob(warm[1])), '-', '', `(diagnostic; first ${WARMUP_JOBS} jobs)`);
  console.log('');
  row('added latency', 'floor - direct', 'graphrun - floor');
  row('p50', ms(p50(f) - p50(d)), ms(p50(g) - p50(f)));
  row('p99', ms(p99(f) - p99(d)), ms(p99(g) - p99(f)));
  console.log(
    `\n  jobs per worker: graphrun's ${g.perWorker.join(' / ')}, the floor's ${f.perWorker.join(' / ')}.` +
      " Both targets judge graphrun: its added p50 over direct, its server's CPU per job." +
      '\n  Latency is submit -> done: through graphrun or the floor to the terminal SSE status (outputs stored, fsynced);' +
      '\n  direct to the last /view byte. Added latency is the difference of two percentiles (jobs are not paired).' +
      '\n  floor - direct is the least any relay adds here; graphrun - floor is what graphrun adds above that least.',
  );
}
