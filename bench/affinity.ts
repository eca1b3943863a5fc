// Model-affinity benchmark (npm run bench:affinity): what routing a job to
// the engine server that already holds its models saves. BENCH_JOBS jobs
// (default 500), each loading one of 6 checkpoints chosen Zipf-skewed (a
// LoRA of 3 on a quarter of them), go to 4 fake engine servers
// (test/fakes/comfyui-worker.ts speaking the engine server's protocol, with
// the loaders of test/fakes/comfyui-model-nodes.ts): each charges
// BENCH_LOAD_MS (default 300 ms) per model not in its memory, which holds 3
// models (LRU), and BENCH_RUN_MS (default 20 ms) of sampling per job. The
// same seeded stream runs twice in this process, on fresh servers: with
// routing 'affinity' (affinityWaitMs = BENCH_WAIT_MS, default three load
// times; modelsPerServer = the servers' memory) and with 'least-loaded' (the
// baseline: every peer's rule). A bound of one load time or less gains
// little: a holder often loads another model (one load) before it is free.
// Both keep 12 jobs in flight (the service's scheduler keeps a few per
// server). Printed: model loads, mean and p99 latency per job (submit ->
// done, the wait for a server included) and wall time of each.
// Target: affinity makes at least 60 % fewer model loads.
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import type { ExecutionContext, Workflow } from '../engine/types.ts';
import { createModelNodes } from '../test/fakes/comfyui-model-nodes.ts';
import { startFakeWorker } from '../test/fakes/comfyui-worker.ts';
import { jobStream } from './affinity-stream.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 500);
const LOAD_MS = Number(process.env.BENCH_LOAD_MS ?? 300);
const RUN_MS = Number(process.env.BENCH_RUN_MS ?? 20);
const SERVERS = 4;
const MEMORY = 3;
const IN_FLIGHT = 12;
// How long a job may wait for a busy server holding its models: the holder may itself be loading a model first.
const WAIT_MS = Number(process.env.BENCH_WAIT_MS ?? 3 * LOAD_MS);
const TARGET_FEWER = 0.6;
const CHECKPOINTS = Array.from({ length: 6 }, (_, i) => `model-${i + 1}.safetensors`);
const LORAS = ['detail.safetensors', 'style.safetensors', 'light.safetensors'];

if (!Number.isInteger(JOBS) || JOBS < 1 || !(LOAD_MS >= 0) || !(RUN_MS >= 0) || !(WAIT_MS >= 0)) {
  console.error('BENCH_JOBS must be a whole number of at least 1; BENCH_LOAD_MS, BENCH_RUN_MS and BENCH_WAIT_MS numbers of at least 0.');
  process.exit(2);
}

interface Result {
  loads: number;
  latencies: number[];
  wallMs: number;
  perServer: number[];
}

/** Outputs (the text each job shows) are read and dropped, events too: the bench measures routing, not storage. */
const context = (): ExecutionContext => ({
  signal: new AbortController().signal,
  emit: () => {},
  async commitOutput(o) {
    let size = 0;
    if (o.body instanceof Uint8Array) size = o.body.byteLength;
    else for await (const chunk of o.body) size += chunk.byteLength;
    const id = crypto.randomUUID();
    return { id, node_id: o.node_id, name: o.name, type: o.type, content_type: o.content_type, size_bytes: size, hash: null };
  },
  readAsset: async () => null,
});

async function run(routing: 'affinity' | 'least-loaded', jobs: Workflow[]): Promise<Result> {
  const models = Array.from({ length: SERVERS }, () =>
    createModelNodes({ checkpoints: CHECKPOINTS, loras: LORAS, loadMs: LOAD_MS, capacity: MEMORY }),
  );
  const servers = await Promise.all(models.map((m) => startFakeWorker({ nodes: m.nodes })));
  const engine = createComfyEngine({
    workers: servers.map((s) => s.url),
    routing,
    affinityWaitMs: WAIT_MS,
    modelsPerServer: MEMORY,
    healthIntervalMs: 1000,
    crossCheckMs: 1000,
  });
  try {
    while (engine.readiness().state !== 'ready') await new Promise((r) => setTimeout(r, 20));
    const latencies: number[] = [];
    let next = 0;
    const began = performance.now();
    const lane = async () => {
      while (next < jobs.length) {
        const i = next++;
        const t0 = performance.now();
        await engine.execute({ id: `${routing}-${i}-${crypto.randomUUID()}`, account_id: 'bench', workflow: jobs[i] }, context());
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    const wallMs = performance.now() - began;
    return { loads: models.reduce((n, m) => n + m.loads.length, 0), latencies, wallMs, perServer: servers.map((s) => s.submissions.length) };
  } finally {
    await engine.close();
    await Promise.all(servers.map((s) => s.close()));
  }
}

const began = performance.now();
const jobs = jobStream({ jobs: JOBS, checkpoints: CHECKPOINTS, loras: LORAS, loraShare: 0.25, zipf: 1.1, runMs: RUN_MS, seed: 42 });
try {
  const affinity = await run('affinity', jobs);
  const baseline = await run('least-loaded', jobs);
  report(affinity, baseline);
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
console.log(`\ntotal ${((performance.now() - began) / 1000).toFixed(0)} s`);
process.exit();

function report(a: Result, b: Result): void {
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  const mean = (r: Result) => r.latencies.reduce((x, y) => x + y, 0) / r.latencies.length;
  const p99 = (r: Result) => [...r.latencies].sort((x, y) => x - y)[Math.max(0, Math.ceil(0.99 * r.latencies.length) - 1)];
  const row = (label: string, ...cells: string[]) => console.log(`  ${label.padEnd(22)}${cells.map((c) => c.padEnd(18)).join('')}`);
  const fewer = b.loads === 0 ? 0 : 1 - a.loads / b.loads;
  console.log(
    `\naffinity: ${JOBS} jobs (one of ${CHECKPOINTS.length} checkpoints, Zipf 1.1; a LoRA of ${LORAS.length} on 25 %) on ${SERVERS} fake servers` +
      ` holding ${MEMORY} models each; ${LOAD_MS} ms per model load, ${RUN_MS} ms per job; ${IN_FLIGHT} in flight; same stream both ways\n`,
  );
  row('', 'affinity', 'least-loaded', 'change', 'target');
  row('model loads', String(a.loads), String(b.loads), `${(-fewer * 100).toFixed(1)} %`, `>= 60 % fewer  ${fewer >= TARGET_FEWER ? 'PASS' : 'FAIL'}`);
  row('latency, mean', ms(mean(a)), ms(mean(b)), `${((mean(a) / mean(b) - 1) * 100).toFixed(1)} %`);
  row('latency, p99', ms(p99(a)), ms(p99(b)), `${((p99(a) / p99(b) - 1) * 100).toFixed(1)} %`);
  row('wall time', `${(a.wallMs / 1000).toFixed(2)} s`, `${(b.wallMs / 1000).toFixed(2)} s`, `${((a.wallMs / b.wallMs - 1) * 100).toFixed(1)} %`);
  console.log(
    `\n  jobs per server: affinity ${a.perServer.join(' / ')}, least-loaded ${b.perServer.join(' / ')}` +
      `\n  Affinity waits at most ${WAIT_MS} ms (BENCH_WAIT_MS; 3 loads by default) for a busy server holding a job's models while another is free.` +
      '\n  Latency is submit -> done through the worker engine, the wait for a server included.',
  );
}
