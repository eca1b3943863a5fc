// The measurements of bench/scale.ts on one case: an API-only instance at
// `base` (in the bench's process, its storage at hand for reading rows) and
// runner processes elsewhere on the same storage.
//
// Throughput: N trivial jobs submitted as fast as 16 clients can, then the
// rows read back. Runners hear of jobs queued on another instance only
// from their own poll (every second) or when they end a job, so they join
// a burst up to a second apart: the figure is the completions while every
// runner was busy, from the moment the last one started its first job of
// the burst (seen by sampling the running rows' lease owners every 100 ms)
// to the last start (the queue was empty after it), over that time.
//
// Latencies: jobs submitted one by one at random moments (exponential gaps)
// while the runners are otherwise idle, each followed on the API instance's
// SSE stream: queue -> start is the job's `started_at - created_at`; the
// event latency is when the stream delivers `status: succeeded`, minus the
// row's `completed_at` (one clock: every process is on this machine).
import type { Storage } from '../index.ts';
import { SseReader } from '../test/helpers/sse-client.ts';
import { childrenCpu, machineCpu, type Runner } from './scale-processes.ts';
import { ACCOUNTS, trivialWorkflow } from './scale-setup.ts';

export interface Api {
  base: string;
  storage: Storage;
  /** Throws when the case cannot go on (a runner died): a wait ends then, not at its bound. */
  check(): void;
}

const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];
const SUBMITTERS = 16;
const SAMPLE_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let colors = 0;

const auth = (i: number) => ({ authorization: `Bearer ${ACCOUNTS[i % ACCOUNTS.length].apiKeys[0]}` });

async function submit(base: string, i: number): Promise<string> {
  const res = await fetch(`${base}/api/v2/jobs`, {
    method: 'POST',
    headers: { ...auth(i), 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: trivialWorkflow(++colors) }),
  });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 201 || !body.id) throw new Error(`POST /api/v2/jobs answered ${res.status}: ${JSON.stringify(body)}`);
  return body.id;
}

/** Submits n jobs, SUBMITTERS at a time, accounts in turn; the ids and when the last one was accepted. */
async function submitAll(base: string, n: number): Promise<{ ids: string[]; lastAt: number }> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SUBMITTERS }, async () => {
      while (next < n) {
        const i = next++;
        ids.push(await submit(base, i));
      }
    }),
  );
  return { ids, lastAt: Date.now() };
}

/** Waits until `target` jobs of the storage have ended; at most `boundMs`. */
async function settle({ storage, check }: Api, target: number, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    check();
    const done = await storage.metadata.countJobs(TERMINAL);
    if (done >= target) break;
    if (Date.now() > deadline) throw new Error(`only ${done} of ${target} jobs ended within ${boundMs / 1000} s`);
    await sleep(20);
  }
  const bad = await storage.metadata.countJobs(['failed', 'canceled', 'expired']);
  if (bad > 0) throw new Error(`${bad} jobs did not succeed`);
}

/** Jobs the API instance ran through the runners since the case began; warms the runners' threads and connections. */
export async function warmUp(api: Api, n: number): Promise<void> {
  await submitAll(api.base, n);
  await settle(api, n, 60_000);
}

export interface Throughput {
  /** Completions while every runner was busy, per second. */
  jobsPerSecond: number;
  windowMs: number;
  windowJobs: number;
  /** n over first submission -> last completion: with the runners' discovery of the burst. */
  endToEnd: number;
  /** Submissions per second (the API instance must outpace the runners for the queue to stay full). */
  submitted: number;
  /** How long before the queue ran dry the last job was submitted (ms; near 0 or below: submission bound it). */
  submitLeadMs: number;
  /** CPU of our processes (runners, API instance and clients, database, S3 server) per job of the burst, ms. */
  cpuMsPerJob: number;
  /** Jobs seen running per lease owner (sampled). */
  shares: number[];
  cpu: CpuShares;
}

/** CPU during the burst, % of one core (so up to 100 x cores). */
export interface CpuShares {
  machine: number;
  cores: number;
  runners: number[];
  /** This process: the API instance and its clients. */
  bench: number;
  database: number;
  s3: number;
  /** What else ran on the machine meanwhile (not ours). */
  others: number;
}

function cpuShares(
  before: { machine: ReturnType<typeof machineCpu>; children: ReturnType<typeof childrenCpu>; bench: NodeJS.CpuUsage },
  runners: Runner[],
  elapsedMs: number,
): CpuShares {
  const machine = machineCpu();
  const bench = process.cpuUsage(before.bench);
  const percent = (ms: number) => (ms / elapsedMs) * 100;
  const shares = { runners: runners.map(() => 0), database: 0, s3: 0 };
  for (const [pid, { name, ms }] of childrenCpu()) {
    const used = percent(ms - (before.children.get(pid)?.ms ?? 0));
    const runner = runners.findIndex((r) => r.pid === pid);
    if (runner >= 0) shares.runners[runner] = used;
    else if (name === 'postgres') shares.database += used;
    else shares.s3 += used; // s3rver, the only other child
  }
  const total = ((machine.busy - before.machine.busy) / (machine.total - before.machine.total)) * machine.cores * 100;
  const benchShare = percent((bench.user + bench.system) / 1000);
  const ours = shares.runners.reduce((a, b) => a + b, 0) + benchShare + shares.database + shares.s3;
  return { machine: total, cores: machine.cores, ...shares, bench: benchShare, others: Math.max(0, total - ours) };
}

export async function throughput(api: Api, runners: Runner[], n: number, already: number): Promise<Throughput> {
  const owners = new Map<string, Map<string, number>>(); // owner -> job id -> started_at
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      for (const job of await api.storage.metadata.listJobsByStatus(['running'], 1000)) {
        if (!job.lease || job.started_at === null) continue;
        let seen = owners.get(job.lease.owner);
        if (!seen) owners.set(job.lease.owner, (seen = new Map()));
        seen.set(job.id, job.started_at);
      }
      await sleep(SAMPLE_MS);
    }
  })();

  const cpu0 = { machine: machineCpu(), children: childrenCpu(), bench: process.cpuUsage() };
  const t0 = Date.now();
  let submitted: { ids: string[]; lastAt: number };
  try {
    submitted = await submitAll(api.base, n);
    await settle(api, already + n, 180_000);
  } finally {
    sampling = false;
    await sampler;
  }
  const elapsed = Date.now() - t0;
  const cpu = cpuShares(cpu0, runners, elapsed);

  const ids = new Set(submitted.ids);
  const rows = (await api.storage.metadata.listJobsByStatus(['succeeded'], already + n + 100)).filter((j) => ids.has(j.id));
  if (rows.length !== n) throw new Error(`${rows.length} of ${n} jobs read back as succeeded`);
  if (owners.size < runners.length) throw new Error(`${owners.size} of ${runners.length} runners were seen running jobs`);
  // When the last runner to join started its first job of the burst (the earliest it was seen with).
  const from = Math.max(...[...owners.values()].map((seen) => Math.min(...seen.values())));
  const to = Math.max(...rows.map((j) => j.started_at!));
  const windowJobs = rows.filter((j) => j.completed_at! > from && j.completed_at! <= to).length;
  return {
    jobsPerSecond: windowJobs / ((to - from) / 1000),
    windowMs: to - from,
    windowJobs,
    endToEnd: n / ((Math.max(...rows.map((j) => j.completed_at!)) - t0) / 1000),
    submitted: n / ((submitted.lastAt - t0) / 1000),
    submitLeadMs: to - submitted.lastAt,
    shares: [...owners.values()].map((seen) => seen.size),
    cpu,
    cpuMsPerJob: (((cpu.machine - cpu.others) / 100) * elapsed) / n,
  };
}

export interface Latencies {
  /** started_at - created_at, ms. */
  queueMs: number[];
  /** `status: succeeded` on the API instance's stream minus completed_at, ms. */
  eventMs: number[];
  /** Jobs that had ended before their stream opened (no event latency to take). */
  endedBeforeStream: number;
}

async function follow({ base, check }: Api, i: number, out: Latencies): Promise<void> {
  const id = await submit(base, i);
  const res = await fetch(`${base}/api/v2/jobs/${id}/events`, { headers: { ...auth(i), accept: 'text/event-stream' } });
  if (res.status !== 200 || !res.body) throw new Error(`GET /api/v2/jobs/${id}/events answered ${res.status}`);
  const sse = new SseReader(res.body);
  try {
    for (let first = true; ; first = false) {
      check();
      const e = await sse.nextEvent(30_000);
      if (e === null) throw new Error(`the stream of job ${id} ended before its end`);
      if (e.event !== 'status') continue;
      if (!TERMINAL.includes(e.json.status)) continue;
      const arrived = Date.now();
      const job = e.json as { status: string; created_at: string; started_at: string; completed_at: string };
      if (job.status !== 'succeeded') throw new Error(`job ${id} ended ${job.status}`);
      out.queueMs.push(Date.parse(job.started_at) - Date.parse(job.created_at));
      if (first) out.endedBeforeStream++;
      else out.eventMs.push(arrived - Date.parse(job.completed_at));
      return;
    }
  } finally {
    await sse.cancel();
  }
}

/** n jobs at random moments, `meanGapMs` apart on average, each followed to its end. */
export async function latencies(api: Api, n: number, meanGapMs: number): Promise<Latencies> {
  const out: Latencies = { queueMs: [], eventMs: [], endedBeforeStream: 0 };
  const followers: Promise<void>[] = [];
  let failure: unknown;
  for (let i = 0; i < n && failure === undefined; i++) {
    // Caught at once: a job failing while the next ones are being sent is reported after them, not as unhandled.
    followers.push(follow(api, i, out).catch((err: unknown) => void (failure ??= err)));
    await sleep(-Math.log(1 - Math.random()) * meanGapMs);
  }
  await Promise.all(followers);
  if (failure !== undefined) throw failure;
  return out;
}
