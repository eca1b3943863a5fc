// Child process of bench/ws.ts: one WebSocket server, measured from outside.
// argv[2] = 'service': graphrun behind the real Node server (SQLite + fs blobs
// in the directory argv[3]), one account with the API key argv[4]; a job of `Beat` nodes emits
// progress events and records when each one was emitted.
// argv[2] = 'bare': the baseline, a bare `ws` server that sends the same two
// JSON frames (progress_state, progress) to every client in a loop, recording
// the same moment.
// Times are process.hrtime (CLOCK_MONOTONIC: one clock for both processes).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type WebSocket, WebSocketServer } from 'ws';
import { serve } from '../adapters/node/server.ts';
import { defineNode } from '../engine/local/define-node.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { createService, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';

export type ServerMessage =
  | { type: 'ready'; url: string }
  /** After a full GC: resident set, and the JS heap in use (what is retained, without allocator slack). */
  | { type: 'rss'; bytes: number; heapUsed: number }
  /** hrtime (ns, as strings) at which progress event i (1-based) was emitted, in order. */
  | { type: 'emitted'; times: string[] }
  | { type: 'error'; message: string };
export type ParentMessage = { type: 'rss' } | { type: 'run'; events: number; intervalMs: number } | { type: 'stop' };

const [mode, dir, BENCH_KEY] = process.argv.slice(2);
if ((mode !== 'service' && mode !== 'bare') || !BENCH_KEY || !process.send) {
  throw new Error('run by bench/ws.ts: fork with IPC; argv: service|bare, a data directory, the API key');
}
const send = (message: ServerMessage) => process.send!(message);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const gc = (globalThis as { gc?: () => void }).gc;

let emitted: string[] = [];
let run: (events: number, intervalMs: number) => Promise<void>;
let stop: () => Promise<void>;

if (mode === 'service') {
  const beat = defineNode({
    name: 'Beat',
    category: 'bench',
    output_node: true,
    cacheable: false,
    required: { steps: ['INT', { min: 1, max: 100000 }], ms: ['INT', { min: 0, max: 10000 }] },
    run: async ({ steps, ms }, ctx) => {
      for (let i = 1; i <= (steps as number); i++) {
        await sleep(ms as number);
        emitted.push(process.hrtime.bigint().toString());
        ctx.progress(i, steps as number);
      }
      return { outputs: [] };
    },
  });
  const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs: await createFsBlobStore({ dir: join(dir, 'blobs') }) });
  const service = await createService({
    storage,
    engine: createLocalEngine({ nodes: [beat] }),
    accounts: [{ id: 'bench', tier: 'pro', apiKeys: [BENCH_KEY] }],
    logger: silentLogger,
    sweepIntervalMs: 0,
  });
  const running = await serve(service, { port: 0, logger: silentLogger });
  run = async (events, intervalMs) => {
    const res = await fetch(`${running.url}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` },
      body: JSON.stringify({ workflow: { b: { class_type: 'Beat', inputs: { steps: events, ms: intervalMs } } } }),
    });
    if (res.status !== 201) throw new Error(`submit answered ${res.status}: ${await res.text()}`);
    const { id } = (await res.json()) as { id: string };
    for (;;) {
      const job = (await (await fetch(`${running.url}/api/v2/jobs/${id}`, { headers: { authorization: `Bearer ${BENCH_KEY}` } })).json()) as {
        status: string;
      };
      if (['succeeded', 'failed', 'canceled'].includes(job.status)) {
        if (job.status !== 'succeeded') throw new Error(`bench job ${job.status}`);
        return;
      }
      await sleep(50);
    }
  };
  stop = async () => {
    await running.close();
    await service.close();
  };
  send({ type: 'ready', url: running.url });
} else {
  const server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  const PROMPT_ID = '00000000-0000-4000-8000-000000000000';
  const clients = new Set<WebSocket>();
  wss.on('connection', (ws) => {
    clients.add(ws);
    ws.once('close', () => clients.delete(ws));
    ws.send(JSON.stringify({ type: 'status', data: { status: { exec_info: { queue_remaining: 0 } }, sid: 'bare' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  run = async (events, intervalMs) => {
    for (let i = 1; i <= events; i++) {
      await sleep(intervalMs);
      emitted.push(process.hrtime.bigint().toString());
      // The service's two frames for the same event, each encoded once and sent to each client.
      const state = JSON.stringify({
        type: 'progress_state',
        data: {
          prompt_id: PROMPT_ID,
          nodes: {
            b: {
              value: i,
              max: events,
              state: 'running',
              node_id: 'b',
              prompt_id: PROMPT_ID,
              display_node_id: 'b',
              parent_node_id: null,
              real_node_id: 'b',
            },
          },
        },
      });
      for (const ws of clients) ws.send(state);
      const progress = JSON.stringify({ type: 'progress', data: { value: i, max: events, prompt_id: PROMPT_ID, node: 'b' } });
      for (const ws of clients) ws.send(progress);
    }
  };
  stop = async () => {
    for (const ws of clients) ws.terminate();
    await new Promise<void>((resolve) => wss.close(() => server.close(() => resolve())));
  };
  send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

process.on('message', async (message: ParentMessage) => {
  try {
    if (message.type === 'rss') {
      // Twice: a full collection, then what finalizers freed.
      gc?.();
      gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      send({ type: 'rss', bytes: rss, heapUsed });
    } else if (message.type === 'run') {
      emitted = [];
      await run(message.events, message.intervalMs);
      send({ type: 'emitted', times: emitted });
    } else if (message.type === 'stop') {
      await stop();
      process.exit(0);
    }
  } catch (err) {
    send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
