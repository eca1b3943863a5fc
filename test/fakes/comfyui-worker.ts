// A fake engine worker: a real HTTP + WebSocket server speaking the real
// engine server's protocol (../shared/reference/comfyui-protocol.md), every
// route bare and under /api, executing prompts for real with the local
// engine (built-in + test nodes) one at a time from its queue, with its
// files on disk and a node cache of its own, as the real server's. Tests of
// the worker engine drive it like a GPU box, inspect its state, and flip its
// failure switches (see comfyui-failures.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalNode } from '../../engine/local/define-node.ts';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { builtinNodes } from '../../engine/local/nodes/index.ts';
import type { Engine } from '../../engine/types.ts';
import { createTestNodes, type TestNodes } from '../helpers/local-nodes.ts';
import { createNodeCache } from './comfyui-cache.ts';
import { defaultFailures, type FakeWorkerFailures } from './comfyui-failures.ts';
import { createFileStore, type FileStore } from './comfyui-files.ts';
import { failRoute, toWebRequest, writeResult } from './comfyui-http.ts';
import { fakeNodes } from './comfyui-nodes.ts';
import { createPromptQueue, type PromptQueue } from './comfyui-queue.ts';
import { createRoutes } from './comfyui-routes.ts';
import type { PromptRun } from './comfyui-run.ts';
import { type NodeObserver, wrapNode } from './comfyui-wrap-node.ts';
import { createWsHub, type FakeSocket, type SentFrame } from './comfyui-ws.ts';

export type { FakeWorkerFailures, InjectedError, InjectedErrorKind, RouteFailure } from './comfyui-failures.ts';
export { ERROR_CATALOG } from './comfyui-failures.ts';
export type { HistoryEntry, QueueItem } from './comfyui-queue.ts';
export type { SentFrame } from './comfyui-ws.ts';

export interface FakeWorkerOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** Where input/, output/, temp/ live; default a fresh temp dir removed on close. */
  dir?: string;
  /** Steps of the test node `Stepper` (createTestNodes). */
  steps?: number;
  /** More node classes, besides the built-in, test (createTestNodes) and fake (comfyui-nodes.ts) nodes. */
  nodes?: LocalNode[];
  /** Initial failure switches (they stay mutable through `failures`). */
  failures?: Partial<FakeWorkerFailures>;
}

export interface FakeWorker {
  /** `http://host:port` (no trailing slash). */
  readonly url: string;
  /** `ws://host:port/ws` (add `?clientId=`). */
  readonly wsUrl: string;
  readonly port: number;
  /** Failure switches; mutate them at any time. */
  readonly failures: FakeWorkerFailures;
  readonly engine: Engine;
  /** run() calls per test node class. */
  readonly runs: TestNodes['runs'];
  readonly files: FileStore;
  readonly queue: PromptQueue;
  /** Every POST /prompt body as received (extra_data with API keys included). */
  readonly submissions: Array<{ prompt_id: string; body: Record<string, unknown> }>;
  /** Every POST /interrupt, with the prompt id its body named (null: none). */
  readonly interrupts: Array<{ prompt_id: string | null }>;
  /** Every HTTP request, in arrival order (path as requested, /api included). */
  readonly requests: Array<{ method: string; path: string }>;
  /** Every WebSocket frame sent, per socket id. */
  readonly sent: SentFrame[];
  /** Open WebSockets by client id. */
  readonly sockets: Map<string, FakeSocket>;
  /** Resolves when nothing is pending or running. */
  idle(): Promise<void>;
  /** Drops every open WebSocket now (no close frame). */
  dropWebSockets(): void;
  /** Stops listening and cuts every connection (a network failure); queue and history stay. */
  refuse(): Promise<void>;
  /** A crash: like refuse(), and the queue, the running prompt and the history are lost. */
  crash(): Promise<void>;
  /** A stuck node (hang 'stuck') returns now, failing: its prompt ends (interrupted if an interrupt came meanwhile). */
  unstick(): void;
  /** Listens again on the same port after refuse()/crash(). */
  accept(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeWorker(opts: FakeWorkerOptions = {}): Promise<FakeWorker> {
  const failures: FakeWorkerFailures = { ...defaultFailures(), ...opts.failures };
  const ownDir = !opts.dir;
  const files = createFileStore(opts.dir ?? mkdtempSync(join(tmpdir(), 'fake-comfyui-')));
  const test = createTestNodes({ steps: opts.steps });
  let release!: () => void;
  let released!: Promise<void>;
  const arm = () => (released = new Promise<void>((r) => (release = r)));
  arm();
  const runs = new WeakMap<AbortSignal, PromptRun>();
  const hooks = { failures, released: () => released, runFor: (signal: AbortSignal): NodeObserver | undefined => runs.get(signal) };
  const nodes = [...builtinNodes, ...test.nodes, ...fakeNodes, ...(opts.nodes ?? [])].map((n) => wrapNode(n, hooks));
  // The engine caches nothing: the fake's cache decides, as the real server's does (output nodes included).
  const engine = createLocalEngine({ nodes, cacheSize: 0 });
  const classes = new Map(nodes.map((n) => [n.definition.name, n]));
  const cache = createNodeCache({ classOf: (name) => classes.get(name), readInput: (name) => files.readInput(name) });

  // Messages of the prompt running now, counted for the dropWebSocketsAfter switch; its cached nodes, for cachedExecuted.
  let promptMessages = { prompt_id: '', count: 0, cached: new Set<unknown>() };
  const queue: PromptQueue = createPromptQueue({
    engine,
    files,
    cache,
    send(client_id, prompt_id, msg) {
      if (promptMessages.prompt_id !== prompt_id) promptMessages = { prompt_id, count: 0, cached: new Set() };
      if (msg.kind === 'json' && msg.type === 'execution_cached' && Array.isArray(msg.data.nodes)) promptMessages.cached = new Set(msg.data.nodes);
      if (!failures.cachedExecuted && msg.kind === 'json' && msg.type === 'executed' && promptMessages.cached.has(msg.data.node)) return;
      // Progress text goes to every socket, as the real server sends it.
      if (msg.kind === 'text') hub.toAll(msg);
      else hub.toClient(client_id, msg);
      const n = ++promptMessages.count;
      if (failures.dropWebSocketsAfter !== null && n === failures.dropWebSocketsAfter) {
        if (!failures.dropWebSocketsSticky) failures.dropWebSocketsAfter = null;
        hub.dropAll();
      }
    },
    started: (run) => runs.set(run.ctx.signal, run),
    queueChanged: () => hub.broadcastStatus(),
  });
  const hub = createWsHub({
    queueRemaining: () => queue.remaining(),
    runningFor: (sid) => (queue.running?.item[3].client_id === sid ? (queue.running.run.current?.node ?? null) : null),
    refuse: () => failures.refuseWebSockets,
  });
  const submissions: FakeWorker['submissions'] = [];
  const requests: FakeWorker['requests'] = [];
  const interrupts: FakeWorker['interrupts'] = [];
  const route = createRoutes({ engine, queue, files, failures, submissions, interrupts });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    requests.push({ method, path: url.pathname });
    if (failures.blackhole) return; // never answered; the connection stays open until cut
    const path = url.pathname.replace(/^\/api(?=\/)/, '');
    if (failRoute(failures, method, path, res)) return;
    await writeResult(res, await route(method, path, url, toWebRequest(req, url)));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  const conns = new Set<Socket>();
  server.on('connection', (s) => {
    conns.add(s);
    s.on('close', () => conns.delete(s));
  });
  server.on('upgrade', (req, socket, head) => {
    if (failures.blackhole) return;
    hub.upgrade(req, socket, head);
  });

  const host = opts.host ?? '127.0.0.1';
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(opts.port ?? 0);
  const port = (server.address() as { port: number }).port;

  const cut = async () => {
    hub.dropAll();
    const closed = server.listening ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    for (const s of conns) s.destroy();
    await closed;
  };

  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}/ws`,
    port,
    failures,
    engine,
    runs: test.runs,
    files,
    queue,
    submissions,
    interrupts,
    requests,
    sent: hub.sent,
    sockets: hub.sockets,
    idle: () => queue.idle(),
    dropWebSockets: () => hub.dropAll(),
    refuse: cut,
    async crash() {
      await cut();
      queue.reset();
    },
    async accept() {
      if (!server.listening) await listen(port);
    },
    unstick() {
      const now = release;
      arm();
      now();
    },
    async close() {
      failures.blackhole = false;
      queue.reset();
      release();
      hub.close();
      await cut();
      await engine.close();
      if (ownDir) rmSync(files.root, { recursive: true, force: true });
    },
  };
}
