// Child process of bench/jobs.ts (part 3): the service on SQLite + fs blobs in
// the directory given as argv[2], behind the real Node server, holding one
// succeeded job with a PNG output; and beside it a bare node:http server answering every
// request with the bytes and headers the real server gave for that job once.
// Both live in this process, so the client (the parent) has the other core.
// argv[3] = 'key': the service has one account with an API key (the ready
// message says the header to send), so every GET also authenticates it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '../adapters/node/server.ts';
import { createLocalEngine } from '../engine/local/engine.ts';
import { builtinNodes } from '../engine/local/nodes/index.ts';
import { createService, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { createTestNodes } from '../test/helpers/local-nodes.ts';

export type ServerMessage =
  | {
      type: 'ready';
      url: string;
      bareUrl: string;
      path: string;
      status: string;
      outputs: number;
      bytes: number;
      /** Headers every request sends: the API key in 'key' mode. */
      headers: Record<string, string>;
    }
  | { type: 'cpu'; micros: number }
  | { type: 'error'; message: string };
export type ParentMessage = { type: 'cpu' } | { type: 'stop' };

const [dir, mode] = process.argv.slice(2);
if (dir === undefined || !process.send) throw new Error('run by bench/jobs.ts: fork with IPC and a data directory');
const BENCH_KEY = 'bench-jobs-key';
const auth: Record<string, string> = mode === 'key' ? { authorization: `Bearer ${BENCH_KEY}` } : {};
const send = (message: ServerMessage) => process.send!(message);

const storage = await createSqliteStorage({
  filename: join(dir, 'graphrun.db'),
  blobs: await createFsBlobStore({ dir: join(dir, 'blobs') }),
});
const service = await createService({
  storage,
  engine: createLocalEngine({ nodes: [...builtinNodes, ...createTestNodes().nodes], cacheSize: 0 }),
  logger: silentLogger,
  sweepIntervalMs: 0,
  ...(mode === 'key' && { accounts: [{ id: 'bench', apiKeys: [BENCH_KEY] }] }),
});
const running = await serve(service, { port: 0, logger: silentLogger });
let bare: Server | undefined;

try {
  const submitted = await fetch(`${running.url}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    // A tiny image saved as a PNG output, so the job view lists an output with its signed URL.
    body: JSON.stringify({
      workflow: {
        i1: { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 0x336699 } },
        i2: { class_type: 'SaveImage', inputs: { images: ['i1', 0], filename_prefix: 'bench' } },
      },
    }),
  });
  if (submitted.status !== 201) throw new Error(`submit answered ${submitted.status}: ${await submitted.text()}`);
  const { id } = (await submitted.json()) as { id: string };
  const path = `/api/v2/jobs/${id}`;
  // The job runs in this process; a few ms.
  let res: Response;
  let job: { status: string; outputs: unknown[] };
  for (let tries = 0; ; tries++) {
    res = await fetch(`${running.url}${path}`, { headers: auth });
    job = (await res.clone().json()) as typeof job;
    if (['succeeded', 'failed', 'canceled'].includes(job.status) || tries > 500) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  // The body captured once; the bare server sends these bytes with the same headers.
  const body = Buffer.from(await res.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [name, value] of res.headers) {
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name)) headers[name] = value;
  }
  headers['content-length'] = String(body.byteLength);
  const server = createServer((req, out) => {
    req.resume();
    out.writeHead(200, headers);
    out.end(body);
  });
  bare = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  send({ type: 'ready', url: running.url, bareUrl, path, status: job.status, outputs: job.outputs.length, bytes: body.byteLength, headers: auth });
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
}

// BENCH_HEAP_PROFILE=<file>: every allocation sampled (also what the GC already took) from now
// until 'stop', written as a .heapprofile (open it in Chrome DevTools, or sum it by function).
const heapProfile = process.env.BENCH_HEAP_PROFILE;
let inspector: import('node:inspector').Session | undefined;
if (heapProfile) {
  const { Session } = await import('node:inspector');
  inspector = new Session();
  inspector.connect();
  inspector.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

process.on('message', async (message: ParentMessage) => {
  if (inspector && message.type === 'stop') {
    const { writeFileSync } = await import('node:fs');
    await new Promise<void>((resolve) =>
      inspector!.post('HeapProfiler.stopSampling', (err, result) => {
        if (!err) writeFileSync(heapProfile!, JSON.stringify(result.profile));
        resolve();
      }),
    );
  }
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    send({ type: 'cpu', micros: user + system });
  } else if (message.type === 'stop') {
    bare?.closeAllConnections();
    bare?.close();
    await running.close();
    await service.close();
    process.exit(0);
  }
});
