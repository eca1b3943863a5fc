// Event latency on one instance (npm run bench:event-latency): from a node's
// progress call in the in-process engine to the arrival of that step at an
// SSE client (GET /api/v2/jobs/{id}/events, `progress` event) and at a `/ws`
// client (the cloud-compatible `progress` frame), through a real Node server
// (serve()). Everything runs in this process, so one clock (performance.now)
// stamps the emit and the arrival; the clients' reading and parsing are part
// of what is measured, for the baseline alike.
// Baseline, same run: a bare node:http SSE server and a bare `ws` server that
// send the same frames (the SSE event; progress_state then progress on the
// WebSocket) for steps emitted the same way.
// Steps are paced: the next is emitted once both clients have the one before
// (the path is measured, not a queue). progressIntervalMs is set to 0 here:
// by default the service coalesces progress to ~2 pushes a second on purpose
// (the first of a window goes at once, the rest wait for the window's end),
// which would measure that throttle, not the path. Order of the runs
// bare, service, service, bare; the samples of both runs of a kind are pooled.
// Target: p99 < 10 ms for SSE and for /ws.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { WebSocket, WebSocketServer } from 'ws';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { type Harness, startHarness } from '../test/helpers/harness.ts';
import { SseReader } from '../test/helpers/sse-client.ts';
import { ticksNode } from './ticks-node.ts';

const STEPS = Number(process.env.BENCH_EVENT_STEPS ?? 1000);
const WARMUP = 100;
/** A step that never arrives does not stall the run: the next one goes after this. */
const STEP_BOUND_MS = 2000;
const TARGET_P99_MS = 10;
/** A stream silent this long (no step, no keep-alive) has stalled: the run fails rather than hang. */
const READ_BOUND_MS = 120_000;
const PROGRESS_PREFIX = '{"type":"progress",';

type Channel = 'sse' | 'ws';

/** One measured run: when each step was emitted, when each channel got it. */
class Pace {
  emitted = new Map<number, number>();
  arrivals: Record<Channel, Map<number, number>> = { sse: new Map(), ws: new Map() };
  #waiters = new Map<number, () => void>();

  /** Stamps step `i`, lets `emit` send it, and resolves once both channels have it (or the bound passed). */
  step(i: number, emit: () => void): Promise<void> {
    const both = new Promise<void>((resolve) => {
      this.#waiters.set(i, resolve);
      setTimeout(resolve, STEP_BOUND_MS).unref();
    });
    this.emitted.set(i, performance.now());
    emit();
    return both;
  }

  arrived(channel: Channel, i: number): void {
    if (!this.arrivals[channel].has(i)) this.arrivals[channel].set(i, performance.now());
    if (this.arrivals.sse.has(i) && this.arrivals.ws.has(i)) {
      this.#waiters.get(i)?.();
      this.#waiters.delete(i);
    }
  }

  latencies(channel: Channel): number[] {
    const out: number[] = [];
    for (const [i, at] of this.arrivals[channel]) if (i > WARMUP) out.push(at - this.emitted.get(i)!);
    return out;
  }
}

let pace = new Pace();

const ticks = ticksNode((i, _n, emit) => pace.step(i, emit));

/** Calls `onProgress` with the data of each `progress` event of an SSE body, until it ends. */
async function readSse(body: ReadableStream<Uint8Array>, onProgress: (data: string) => void): Promise<void> {
  const sse = new SseReader(body);
  for (let e = await sse.nextEvent(READ_BOUND_MS); e !== null; e = await sse.nextEvent(READ_BOUND_MS)) {
    if (e.event === 'progress') onProgress(e.data);
  }
}

/** A `/ws` client that reports each `progress` frame's value; resolves once greeted (registered). */
function connectWs(url: string, onValue: (value: number) => void): Promise<WebSocket> {
  const ws = new WebSocket(url);
  ws.on('message', (data, isBinary) => {
    if (isBinary || !(data as Buffer).toString('latin1', 0, PROGRESS_PREFIX.length).startsWith(PROGRESS_PREFIX)) return;
    onValue((JSON.parse(String(data)) as { data: { value: number } }).data.value);
  });
  return new Promise((resolve, reject) => {
    ws.once('message', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** graphrun: a job of one Ticks node followed on its SSE stream and on `/ws`. */
async function runService(h: Harness): Promise<Pace> {
  pace = new Pace();
  const run = pace;
  const ws = await connectWs(`${h.base.replace(/^http/, 'ws')}/ws`, (value) => run.arrived('ws', value));
  try {
    const res = await h.fetch('/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: { t: { class_type: 'Ticks', inputs: { steps: STEPS } } } }),
    });
    if (res.status !== 201) throw new Error(`submit: ${res.status} ${await res.text()}`);
    const { id } = (await res.json()) as { id: string };
    const events = await h.fetch(`/api/v2/jobs/${id}/events`);
    // The stream ends with the job; a step the node emitted before the stream opened is simply not counted.
    await readSse(events.body!, (data) => {
      const step = (JSON.parse(data) as { step: number | null }).step;
      if (typeof step === 'number') run.arrived('sse', step);
    });
  } finally {
    ws.terminate();
  }
  return run;
}

/** The floor: a bare SSE server and a bare `ws` server sending the same frames for each step. */
async function runBare(): Promise<Pace> {
  pace = new Pace();
  const run = pace;
  const streams = new Set<ServerResponse>();
  let opened!: () => void;
  const streamOpen = new Promise<void>((resolve) => (opened = resolve));
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform' });
    res.flushHeaders();
    streams.add(res);
    opened();
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.send(JSON.stringify({ type: 'status', data: { status: { exec_info: { queue_remaining: 0 } } } })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ws = await connectWs(`ws://${url}/ws`, (value) => run.arrived('ws', value));
  const events = await fetch(`http://${url}/events`);
  const reading = readSse(events.body!, (data) => run.arrived('sse', (JSON.parse(data) as { step: number }).step));
  await streamOpen;
  const id = '00000000-0000-4000-8000-000000000000';
  try {
    for (let i = 1; i <= STEPS; i++) {
      await run.step(i, () => {
        const progress = { value: i / STEPS, node: 't', step: i, steps: STEPS, text: `Ticks ${i}/${STEPS}` };
        for (const res of streams) res.write(`event: progress\ndata: ${JSON.stringify(progress)}\n\n`);
        for (const client of wss.clients) {
          client.send(
            JSON.stringify({
              type: 'progress_state',
              data: { prompt_id: id, nodes: { t: { value: i, max: STEPS, state: 'running', node_id: 't', prompt_id: id } } },
            }),
          );
          client.send(JSON.stringify({ type: 'progress', data: { value: i, max: STEPS, prompt_id: id, node: 't' } }));
        }
      });
    }
  } finally {
    for (const res of streams) res.end();
    await reading;
    ws.terminate();
    server.closeAllConnections();
    await new Promise<void>((resolve) => wss.close(() => server.close(() => resolve())));
  }
  return run;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? Number.NaN;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function main() {
  const h = await startHarness('node-server', {
    engine: createLocalEngine({ nodes: [...builtinNodes, ticks] }),
    // Not the default 500: every step is its own push (see the header).
    progressIntervalMs: 0,
  });
  const runs: Record<'bare' | 'service', Pace[]> = { bare: [], service: [] };
  try {
    for (const kind of ['bare', 'service', 'service', 'bare'] as const) runs[kind].push(kind === 'bare' ? await runBare() : await runService(h));
  } finally {
    await h.close();
  }
  const expected = 2 * (STEPS - WARMUP);
  console.log(
    `event latency on one instance, node progress call -> client, through the Node server; ${STEPS - WARMUP} paced steps after ${WARMUP} of warm-up,` +
      ' twice per kind (bare, service, service, bare); progressIntervalMs 0\n',
  );
  console.log(`${''.padEnd(37)}${'p50'.padEnd(12)}${'p99'.padEnd(12)}${'max'.padEnd(12)}received`);
  const verdicts: string[] = [];
  for (const channel of ['sse', 'ws'] as Channel[]) {
    for (const kind of ['bare', 'service'] as const) {
      const l = runs[kind].flatMap((r) => r.latencies(channel));
      const name = `${channel === 'sse' ? 'SSE /api/v2/jobs/{id}/events' : '/ws progress frame'}${kind === 'bare' ? ' (bare)' : ''}`;
      console.log(
        `${name.padEnd(37)}${ms(quantile(l, 0.5)).padEnd(12)}${ms(quantile(l, 0.99)).padEnd(12)}${ms(Math.max(...l)).padEnd(12)}${l.length}/${expected}`,
      );
      if (kind === 'service') {
        const p99 = quantile(l, 0.99);
        const ok = p99 < TARGET_P99_MS && l.length === expected;
        verdicts.push(`${channel.toUpperCase()} p99 ${ms(p99)} < ${TARGET_P99_MS} ms: ${ok ? 'PASS' : 'FAIL'}`);
      }
    }
  }
  console.log(`\n${verdicts.join('\n')}`);
}

await main();
process.exit();
