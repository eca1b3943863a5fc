// Child process of bench/worker.ts: the "bare relay floor", the least a relay
// server can do for the client contract graphrun serves (POST /api/v2/jobs,
// then GET .../events until the terminal `status`), so the bench can show what
// any relay costs on this machine. Hand-written on node:http, undici and ws:
// no database, no validation, no auth, no graphrun code. What it keeps of a
// relay's duties: one job at a time per worker (the rest wait in memory), the
// job's outputs copied off the worker and fsynced to a file in argv[2] before
// the job is done (the durability a storage server owes), and success taken
// from the worker's messages (as graphrun takes it when its socket heard the
// whole run: no /history request). Worker URLs
// are argv[3..]. Speaks worker-server.ts's IPC: 'ready' once every worker's
// WebSocket is open, 'cpu', 'stop'.
import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { WebSocket } from 'ws';
import type { ServerMessage, ServerRequest } from './worker-server.ts';

const [dir, ...urls] = process.argv.slice(2);
if (dir === undefined || urls.length === 0 || !process.send)
  throw new Error('run by bench/worker.ts: fork with IPC; argv: a data directory, worker URLs');
const send = (message: ServerMessage) => process.send!(message);

type Output = { name: string; content_type: string; size: number };
interface Job {
  id: string;
  workflow: unknown;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  outputs: Output[];
  error?: string;
  /** The worker sent execution_success. */
  succeeded: boolean;
  /** Files being copied off the worker; each settles (never rejects) once its file is durable or `error` is set. */
  copies: Promise<void>[];
  /** Open event streams. */
  streams: Set<ServerResponse>;
}
type Worker = { url: string; clientId: string; job: Job | null };

// Every job stays for the run (a client may connect after its end); the bench's few thousand are small.
const jobs = new Map<string, Job>();
const waiting: Job[] = [];
const workers: Worker[] = urls.map((url) => ({ url, clientId: randomUUID(), job: null }));
const terminal = (job: Job) => job.status === 'succeeded' || job.status === 'failed';
const frame = (job: Job) => `event: status\ndata: ${JSON.stringify({ id: job.id, status: job.status, outputs: job.outputs, error: job.error })}\n\n`;

/** Tells every open stream the job's new status, ending them after a terminal one. */
function publish(job: Job, status: Job['status']): void {
  job.status = status;
  for (const res of job.streams) {
    res.write(frame(job));
    if (terminal(job)) res.end();
  }
  if (terminal(job)) job.streams.clear();
}

/** undici's `request` goes through its global Agent, which keeps connections to the workers alive. */
async function call(url: string, init?: { method: 'POST'; body: string }): Promise<Buffer> {
  const res = await request(url, init && { ...init, headers: { 'content-type': 'application/json' } });
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${body.toString().slice(0, 300)}`);
  return body;
}

/** Starts waiting jobs on free workers. */
function dispatch(): void {
  for (const w of workers) {
    if (w.job !== null || waiting.length === 0) continue;
    const job = waiting.shift()!;
    w.job = job;
    publish(job, 'running');
    // The worker's messages for this prompt may come before the POST answers: they find w.job already set.
    call(`${w.url}/prompt`, { method: 'POST', body: JSON.stringify({ prompt: job.workflow, client_id: w.clientId, prompt_id: job.id }) }).catch(
      (err: Error) => end(w, job, err.message),
    );
  }
}

/** The job's terminal status; frees its worker for the next one. */
function end(w: Worker, job: Job, error?: string): void {
  if (w.job !== job) return;
  job.error ??= error;
  publish(job, job.error === undefined ? 'succeeded' : 'failed');
  w.job = null;
  dispatch();
}

/** Copies one output file off the worker into a durable file of our own. */
async function copy(w: Worker, job: Job, n: number, f: { filename: string; subfolder: string; type: string }): Promise<void> {
  const bytes = await call(`${w.url}/view?${new URLSearchParams(f)}`);
  const name = `${job.id}-${n}.png`;
  const file = await open(join(dir, name), 'wx');
  try {
    await file.write(bytes);
    await file.sync();
  } finally {
    await file.close();
  }
  job.outputs.push({ name, content_type: 'image/png', size: bytes.length });
}

/** At the prompt's end: success once the worker said so and every output is durable. */
async function finish(w: Worker, job: Job, succeeded: boolean): Promise<void> {
  if (!succeeded) job.error ??= 'the worker ended the prompt without execution_success';
  await Promise.all(job.copies);
  end(w, job);
}

/** One WebSocket per worker, open before the first job, as graphrun's engine keeps one. */
function connect(w: Worker): Promise<void> {
  const ws = new WebSocket(`${w.url.replace(/^http/, 'ws')}/ws?clientId=${w.clientId}`, { perMessageDeflate: false });
  ws.on('message', (data, isBinary) => {
    const job = w.job;
    if (isBinary || job === null) return; // previews are binary: nothing to relay here
    const msg = JSON.parse(String(data)) as { type: string; data: Record<string, any> };
    if (msg.data?.prompt_id !== job.id) return;
    if (msg.type === 'executed') {
      for (const f of msg.data.output?.images ?? [])
        job.copies.push(copy(w, job, job.copies.length, f).catch((err: Error) => void (job.error ??= err.message)));
    } else if (msg.type === 'execution_success') {
      job.succeeded = true;
    } else if (msg.type === 'executing' && msg.data.node === null) {
      void finish(w, job, job.succeeded);
    } else if (msg.type === 'execution_error') {
      end(w, job, String(msg.data.exception_message));
    }
  });
  ws.on('close', () => w.job && end(w, w.job, 'the worker WebSocket closed'));
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
      resolve();
    });
    ws.once('error', reject);
  });
}

const server = createServer(async (req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'POST' && url === '/api/v2/jobs') {
    let body = '';
    for await (const chunk of req) body += chunk;
    const job: Job = {
      id: randomUUID(),
      workflow: JSON.parse(body).workflow,
      status: 'queued',
      outputs: [],
      succeeded: false,
      copies: [],
      streams: new Set(),
    };
    jobs.set(job.id, job);
    waiting.push(job);
    dispatch(); // before answering, so the 201 tells whether it runs yet
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: job.id, status: job.status }));
    return;
  }
  const job = req.method === 'GET' ? jobs.get(/^\/api\/v2\/jobs\/([^/]+)\/events$/.exec(url)?.[1] ?? '') : undefined;
  if (!job) {
    res.writeHead(404).end();
    return;
  }
  // The status now, then each change; a finished job's stream is its last status.
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(frame(job));
  if (terminal(job)) {
    res.end();
    return;
  }
  job.streams.add(res);
  res.on('close', () => job.streams.delete(res));
});

try {
  await Promise.all(workers.map(connect));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
} catch (err) {
  send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
}

process.on('message', (message: ServerRequest) => {
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    send({ type: 'cpu', micros: user + system });
  } else if (message.type === 'stop') {
    process.exit(0);
  }
});
