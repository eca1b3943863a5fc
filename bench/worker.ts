// Worker engine benchmark (npm run bench:worker): what graphrun adds to a job
// that runs on engine workers. BENCH_JOBS jobs (default 500) of a small image
// workflow (EmptyImage 64x64 -> SaveImage) go to 2 fake workers
// (bench/worker-fakes.ts, a child process) two ways, in the same run:
// - through graphrun (bench/worker-server.ts, another child process: the Node
//   server on SQLite + fs blobs, the worker engine on the two workers), as a
//   v2 client: submit, then follow the job's SSE stream to its terminal status;
// - straight to the workers (the baseline), doing what graphrun does for a
//   job: POST /prompt, follow /ws to the end, GET /history and /view.
// Both keep 2 jobs in flight (one per worker slot). Printed: wall time and
// jobs/s of each, their ratio, per-job latency (submit -> done) p50/p99 of
// each, and the latency graphrun adds (difference of the percentiles).
// Target: under 5 ms added at p50.
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DirectWorker, imageWorkflow, openDirect, runThroughGraphrun, type Workflow } from './worker-clients.ts';
import type { FakesMessage, FakesRequest } from './worker-fakes.ts';
import type { ServerMessage, ServerRequest } from './worker-server.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 500);
const WARMUP_JOBS = Math.min(20, JOBS);
const WORKERS = 2;
const IN_FLIGHT = 2;
const TARGET_P50_MS = 5;

if (!Number.isInteger(JOBS) || JOBS < 2) {
  console.error(`BENCH_JOBS must be a whole number of at least 2, got "${process.env.BENCH_JOBS}".`);
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

const join2 = (a: Batch, b: Batch): Batch => ({ latencies: [...a.latencies, ...b.latencies], wallMs: a.wallMs + b.wallMs });
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

// Every job's color is new to the workers, so none of their nodes is served from a cache.
let color = 0;
const workflows = (n: number) => Array.from({ length: n }, () => imageWorkflow(++color));

const temps: string[] = [];
const began = performance.now();
let fakes: Child<FakesRequest, FakesMessage> | undefined;
let server: Child<ServerRequest, ServerMessage> | undefined;
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
  direct = await Promise.all(ready.urls.map(openDirect));

  const viaGraphrun: Runner[] = Array.from({ length: IN_FLIGHT }, () => (wf) => runThroughGraphrun(up.url, wf));
  const straight: Runner[] = Array.from({ length: IN_FLIGHT }, (_, k) => (wf) => direct[k % direct.length].run(wf));
  const counts = async () => {
    const m = await fakes!.ask({ type: 'counts' });
    if (m.type !== 'counts') throw new Error('counts expected');
    return m.prompts;
  };
  const cpu = async () => {
    const m = await server!.ask({ type: 'cpu' });
    if (m.type !== 'cpu') throw new Error('cpu expected');
    return m.micros;
  };

  await batch(workflows(WARMUP_JOBS), straight);
  await batch(workflows(WARMUP_JOBS), viaGraphrun);
  // Halves in the order direct, graphrun, graphrun, direct: a slow moment of the machine hits both alike.
  const first = Math.floor(JOBS / 2);
  const second = JOBS - first;
  const d1 = await batch(workflows(first), straight);
  const [countsBefore, cpuBefore] = [await counts(), await cpu()];
  const g1 = await batch(workflows(first), viaGraphrun);
  const g2 = await batch(workflows(second), viaGraphrun);
  const [countsAfter, cpuAfter] = [await counts(), await cpu()];
  const d2 = await batch(workflows(second), straight);
  const g = join2(g1, g2);
  const d = join2(d1, d2);
  g.latencies.sort((a, b) => a - b);
  d.latencies.sort((a, b) => a - b);

  const perWorker = countsAfter.map((n, i) => n - countsBefore[i]);
  const serverCpuMs = (cpuAfter - cpuBefore) / 1000;
  report(g, d, perWorker, serverCpuMs);
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  for (const d of direct) d.close();
  await server?.stop();
  await fakes?.stop();
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
}
console.log(`\ntotal ${((performance.now() - began) / 1000).toFixed(0)} s`);
process.exit();

function report(g: Batch, d: Batch, perWorker: number[], serverCpuMs: number): void {
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const row = (label: string, ...cells: string[]) => console.log(`  ${label.padEnd(34)}${cells.map((c) => c.padEnd(18)).join('')}`);
  const jps = (b: Batch) => b.latencies.length / (b.wallMs / 1000);
  const [gp50, gp99, dp50, dp99] = [
    percentile(g.latencies, 50),
    percentile(g.latencies, 99),
    percentile(d.latencies, 50),
    percentile(d.latencies, 99),
  ];
  const added50 = gp50 - dp50;
  console.log(
    `\nworker: ${JOBS} jobs (EmptyImage 64x64 -> SaveImage, one PNG output) per path on ${WORKERS} fake workers in a child process,` +
      ` ${IN_FLIGHT} in flight (one per worker slot), after ${WARMUP_JOBS} warm-up jobs each; halves in the order direct, graphrun, graphrun, direct\n`,
  );
  row('', 'graphrun (v2+SSE)', 'direct (baseline)', 'graphrun - direct', 'target');
  row('jobs', String(g.latencies.length), String(d.latencies.length));
  row('wall time', `${(g.wallMs / 1000).toFixed(2)} s`, `${(d.wallMs / 1000).toFixed(2)} s`);
  row('throughput', `${jps(g).toFixed(1)} jobs/s`, `${jps(d).toFixed(1)} jobs/s`, `ratio ${((jps(g) / jps(d)) * 100).toFixed(1)} %`);
  row('latency per job, p50', ms(gp50), ms(dp50), ms(added50), `< ${TARGET_P50_MS} ms  ${added50 < TARGET_P50_MS ? 'PASS' : 'FAIL'}`);
  row('latency per job, p99', ms(gp99), ms(dp99), ms(gp99 - dp99));
  console.log(
    `\n  graphrun's jobs per worker: ${perWorker.join(' / ')}; graphrun server CPU ${(serverCpuMs / g.latencies.length).toFixed(2)} ms per job` +
      '\n  Latency is submit -> done: through graphrun to the terminal SSE status (outputs stored in graphrun);' +
      '\n  direct to the last /view byte. Added latency is the difference of the two percentiles (jobs are not paired).',
  );
}
