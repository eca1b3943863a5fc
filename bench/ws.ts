// WebSocket benchmark (npm run bench:ws). 1,000 `ws` clients of one account
// connected to a real server in a child process (bench/ws-server.ts):
// 1. fan-out latency: from a job's progress event (emitted by a node in the
//    engine) to its `progress` message's arrival at all 1,000 clients,
//    p50/p99 over a few hundred events; per delivery too;
// 2. server RSS growth per 1,000 connections (after a GC).
// Baseline, measured the same way in the same run: a bare `ws` server that
// sends the same two JSON frames (progress_state, progress) to the same 1,000
// clients in a loop: the floor of any fan-out over `ws` on this machine, this
// client process (one core, reading 2,000 frames per event) included.
import { type ChildProcess, execSync, fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import type { ParentMessage, ServerMessage } from './ws-server.ts';

const CLIENTS = Number(process.env.BENCH_WS_CLIENTS ?? 1000);
const EVENTS = 250;
const WARMUP_EVENTS = 20;
/** Far apart enough that one event's 2,000 frames are read before the next is sent. */
const INTERVAL_MS = 100;
const CONNECT_BATCH = 100;
const WARMUP_CLIENTS = 100;
const BENCH_KEY = 'bench-key';
const PROGRESS_PREFIX = '{"type":"progress",';

type Mode = 'service' | 'bare';

function fdLimit(): number {
  const raw = execSync('ulimit -n', { shell: '/bin/sh' }).toString().trim();
  return raw === 'unlimited' ? Infinity : Number(raw);
}

function startServer(mode: Mode, dir: string) {
  const script = fileURLToPath(new URL('./ws-server.ts', import.meta.url));
  const child: ChildProcess = fork(script, [mode, dir, BENCH_KEY], {
    // BENCH_CPU_PROF=<dir>: each server writes a V8 CPU profile there when it stops.
    execArgv: [
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      '--expose-gc',
      '--import',
      import.meta.resolve('tsx'),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () =>
    new Promise<ServerMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${mode} server exited (${code})`));
      child.once('message', (m) => {
        child.off('exit', onExit);
        const message = m as ServerMessage;
        if (message.type === 'error') reject(new Error(`${mode} server: ${message.message}`));
        else resolve(message);
      });
      child.once('exit', onExit);
    });
  return { child, ready: next(), ask: (message: ParentMessage) => (child.send(message), next()) };
}

/** Clients that note, per progress value, when its `progress` message arrived (hrtime ns). */
async function connectClients(url: string, arrivals: Map<number, number[]>, count: number): Promise<WebSocket[]> {
  const wsUrl = `${url.replace(/^http/, 'ws')}/ws?token=${BENCH_KEY}`;
  const clients: WebSocket[] = [];
  for (let i = 0; i < count; i += CONNECT_BATCH) {
    const batch = Array.from({ length: Math.min(CONNECT_BATCH, count - i) }, () => {
      const ws = new WebSocket(wsUrl);
      ws.on('message', (data, isBinary) => {
        const at = Number(process.hrtime.bigint());
        // Only `progress` frames are parsed: the client's cost is part of what is measured.
        if (isBinary || !(data as Buffer).toString('latin1', 0, PROGRESS_PREFIX.length).startsWith(PROGRESS_PREFIX)) return;
        const message = JSON.parse(String(data)) as { type: string; data: { value: number } };
        let list = arrivals.get(message.data.value);
        if (!list) arrivals.set(message.data.value, (list = []));
        list.push(at);
      });
      // Open and greeted: the server has registered it.
      return new Promise<WebSocket>((resolve, reject) => {
        ws.once('message', () => resolve(ws));
        ws.once('error', reject);
      });
    });
    clients.push(...(await Promise.all(batch)));
  }
  return clients;
}

const per1000 = (bytes: number) => (bytes / 1024 / 1024 / CLIENTS) * 1000;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const sortNum = (a: number[]) => a.sort((x, y) => x - y);

interface Result {
  all: number[];
  each: number[];
  missing: number;
  rssPer1000: number;
  heapPer1000: number;
}

async function measure(mode: Mode): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'graphrun-bench-ws-'));
  const server = startServer(mode, dir);
  try {
    const ready = await server.ready;
    if (ready.type !== 'ready') throw new Error('unexpected first message');
    // Warm-up connections, closed again: the code paths of an upgrade are compiled and
    // their first allocations made before the measured ones.
    const arrivals = new Map<number, number[]>();
    for (const ws of await connectClients(ready.url, arrivals, WARMUP_CLIENTS)) ws.terminate();
    await new Promise((r) => setTimeout(r, 500));
    const before = await server.ask({ type: 'rss' });
    const clients = await connectClients(ready.url, arrivals, CLIENTS);
    const after = await server.ask({ type: 'rss' });
    if (before.type !== 'rss' || after.type !== 'rss') throw new Error('rss expected');

    await server.ask({ type: 'run', events: WARMUP_EVENTS, intervalMs: INTERVAL_MS });
    await new Promise((r) => setTimeout(r, 200));
    arrivals.clear();
    const done = await server.ask({ type: 'run', events: EVENTS, intervalMs: INTERVAL_MS });
    if (done.type !== 'emitted') throw new Error('emitted times expected');
    await new Promise((r) => setTimeout(r, 500)); // stragglers
    const all: number[] = [];
    const each: number[] = [];
    let missing = 0;
    done.times.forEach((t, i) => {
      const emittedAt = Number(BigInt(t));
      const got = arrivals.get(i + 1) ?? [];
      missing += CLIENTS - got.length;
      if (got.length === 0) return;
      for (const at of got) each.push((at - emittedAt) / 1e6);
      all.push((Math.max(...got) - emittedAt) / 1e6);
    });
    for (const ws of clients) ws.terminate();
    return {
      all: sortNum(all),
      each: sortNum(each),
      missing,
      rssPer1000: per1000(after.bytes - before.bytes),
      heapPer1000: per1000(after.heapUsed - before.heapUsed),
    };
  } finally {
    await server.ask({ type: 'stop' }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

const ms = (v: number) => `${v.toFixed(2)} ms`;
const row = (label: string, ...cells: string[]) => console.log(`  ${label.padEnd(44)}${cells.map((c) => c.padEnd(16)).join('')}`);

const limit = fdLimit();
if (limit < CLIENTS + 256) {
  console.error(`bench:ws needs ${CLIENTS + 256} file descriptors per process, the limit is ${limit}: raise it (ulimit -n ${CLIENTS * 2}).`);
  process.exit(1);
}
const began = performance.now();
try {
  // The baseline first, then the service; each in a fresh child.
  const bare = await measure('bare');
  const service = await measure('service');
  console.log(
    `\nws fan-out: ${CLIENTS} clients of one account in this process, server in a child; ${EVENTS} events ${INTERVAL_MS} ms apart` +
      ` (after ${WARMUP_EVENTS} warm-up events); fd limit ${limit}\n`,
  );
  row('', 'graphrun /ws', 'bare ws (base)', 'ratio');
  const line = (label: string, a: number, b: number) => row(label, ms(a), ms(b), `${(a / b).toFixed(2)} x`);
  line('event -> at all clients, p50', percentile(service.all, 50), percentile(bare.all, 50));
  line('event -> at all clients, p99', percentile(service.all, 99), percentile(bare.all, 99));
  line('event -> one client (each delivery), p50', percentile(service.each, 50), percentile(bare.each, 50));
  line('event -> one client (each delivery), p99', percentile(service.each, 99), percentile(bare.each, 99));
  row('deliveries missing', String(service.missing), String(bare.missing));
  row(
    `server RSS growth per 1,000 connections`,
    `${service.rssPer1000.toFixed(1)} MB`,
    `${bare.rssPer1000.toFixed(1)} MB`,
    `${(service.rssPer1000 / bare.rssPer1000).toFixed(2)} x`,
  );
  row(
    `  of which JS heap in use`,
    `${service.heapPer1000.toFixed(1)} MB`,
    `${bare.heapPer1000.toFixed(1)} MB`,
    `${(service.heapPer1000 / bare.heapPer1000).toFixed(2)} x`,
  );
  console.log(
    '\n  Both send two frames per event (progress_state, then progress); the time is to the second one.' +
      '\n  The baseline is a loop of ws.send of pre-encoded frames: no hub, translation or buffer checks.' +
      `\n\ntotal ${((performance.now() - began) / 1000).toFixed(0)} s`,
  );
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
process.exit();
