// The two clients bench/worker.ts times, each running one job per call and
// resolving when the job is done the way that path's client knows it:
// - through graphrun: POST /api/v2/jobs, then GET .../events (SSE, as a client
//   that shows live status does) until the terminal `status` event, which
//   carries the job's outputs, already copied off the worker into graphrun's store;
// - straight to a worker, as a script written after the engine's own example
//   client (websocket_api_example.py) does: POST /prompt with a client id,
//   follow the worker's /ws until `executing` with node null, GET
//   /history/{id}, then GET /view for every file. graphrun makes the same
//   requests but /history, which it skips when its socket heard the whole run.
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import { SseReader } from '../test/helpers/sse-client.ts';

export type Workflow = Record<string, { class_type: string; inputs: Record<string, unknown> }>;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];
const TERMINAL = ['succeeded', 'failed', 'canceled', 'expired'];

/** A small image job with a SaveImage output; `color` makes each job's nodes new to the worker's cache. */
export const imageWorkflow = (color: number): Workflow => ({
  img: { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color } },
  save: { class_type: 'SaveImage', inputs: { images: ['img', 0], filename_prefix: 'bench' } },
});

async function json(res: Response, expected: number, what: string): Promise<any> {
  const text = await res.text();
  if (res.status !== expected) throw new Error(`${what} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Resolves at the terminal status with a function that finishes reading the stream. */
export async function runThroughGraphrun(base: string, workflow: Workflow): Promise<() => Promise<void>> {
  const submitted = await json(
    await fetch(`${base}/api/v2/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workflow }) }),
    201,
    'POST /api/v2/jobs',
  );
  const res = await fetch(`${base}/api/v2/jobs/${submitted.id}/events`, { headers: { accept: 'text/event-stream' } });
  if (res.status !== 200 || !res.body) throw new Error(`GET /api/v2/jobs/{id}/events answered ${res.status}: ${await res.text()}`);
  const sse = new SseReader(res.body);
  let job;
  try {
    for (;;) {
      const event = await sse.nextEvent(30_000);
      if (event === null) throw new Error(`job ${submitted.id}: the event stream ended before a terminal status`);
      if (event.event === 'status' && TERMINAL.includes(event.json?.status)) {
        job = event.json;
        break;
      }
    }
  } catch (err) {
    await sse.cancel();
    throw err;
  }
  if (job.status !== 'succeeded') throw new Error(`job ${submitted.id} ${job.status}: ${JSON.stringify(job.error)}`);
  if (job.outputs?.length !== 1 || job.outputs[0].content_type !== 'image/png')
    throw new Error(`job ${submitted.id}: unexpected outputs ${JSON.stringify(job.outputs)}`);
  // The server ends the stream after the terminal status; reading to its end (off the clock) keeps the connection for the next job.
  return () => sse.readToEnd(5_000).then(() => undefined);
}

export interface DirectWorker {
  run(workflow: Workflow): Promise<void>;
  close(): void;
}

/** A client of one worker, its WebSocket open before the first job as a long-lived client's would be. */
export async function openDirect(url: string): Promise<DirectWorker> {
  const clientId = randomUUID();
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?clientId=${clientId}`, { perMessageDeflate: false });
  // A prompt may end on the socket before its POST has answered: ends are kept until asked for.
  const ended = new Map<string, string | null>();
  const waiting = new Map<string, (error: string | null) => void>();
  const finish = (id: string, error: string | null) => {
    const waiter = waiting.get(id);
    if (waiter) {
      waiting.delete(id);
      waiter(error);
    } else {
      ended.set(id, error);
    }
  };
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const msg = JSON.parse(String(data)) as { type: string; data: Record<string, any> };
    if (msg.type === 'executing' && msg.data.node === null && typeof msg.data.prompt_id === 'string') finish(msg.data.prompt_id, null);
    else if (msg.type === 'execution_error') finish(msg.data.prompt_id, String(msg.data.exception_message));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));

  const done = (id: string) =>
    new Promise<string | null>((resolve) => {
      if (ended.has(id)) {
        const error = ended.get(id)!;
        ended.delete(id);
        resolve(error);
      } else {
        waiting.set(id, resolve);
      }
    });

  return {
    async run(workflow) {
      const { prompt_id: id } = await json(
        await fetch(`${url}/prompt`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: workflow, client_id: clientId }),
        }),
        200,
        'POST /prompt',
      );
      const error = await done(id);
      if (error !== null) throw new Error(`prompt ${id} failed: ${error}`);
      const entry = (await json(await fetch(`${url}/history/${id}`), 200, 'GET /history/{id}'))[id];
      if (entry?.status?.status_str !== 'success') throw new Error(`prompt ${id}: history says ${JSON.stringify(entry?.status)}`);
      const files = Object.values(entry.outputs as Record<string, { images?: Array<{ filename: string; subfolder: string; type: string }> }>).flatMap(
        (o) => o.images ?? [],
      );
      if (files.length !== 1) throw new Error(`prompt ${id}: unexpected outputs ${JSON.stringify(entry.outputs)}`);
      for (const f of files) {
        const query = new URLSearchParams({ filename: f.filename, subfolder: f.subfolder, type: f.type });
        const res = await fetch(`${url}/view?${query}`);
        const bytes = new Uint8Array(await res.arrayBuffer());
        if (res.status !== 200 || PNG_SIGNATURE.some((b, i) => bytes[i] !== b))
          throw new Error(`prompt ${id}: /view answered ${res.status} with ${bytes.length} bytes`);
      }
    },
    close: () => ws.terminate(),
  };
}

/**
 * The storages bench/worker-server.ts can run graphrun on (BENCH_STORAGE); the first is the default, the one the targets judge
 * (a job's small output is then a row of the database: SQLite's default inline blobs). `sqlite+fs-blobs-only` turns inline
 * blobs off (inlineBlobBytes 0): every output is a file, as before they came.
 */
export const STORAGES = ['sqlite+fs-blobs', 'memory', 'sqlite+memory-blobs', 'memory+fs-blobs', 'sqlite+fs-blobs-only'] as const;

/** BENCH_STORAGE, checked. */
export function benchStorage(): (typeof STORAGES)[number] {
  const kind = process.env.BENCH_STORAGE ?? STORAGES[0];
  const known = STORAGES.find((s) => s === kind);
  if (known === undefined) throw new Error(`BENCH_STORAGE must be one of ${STORAGES.join(', ')}; got "${kind}"`);
  return known;
}

/** What bench:worker runs graphrun's server from (BENCH_FROM): the built package (dist/, as installed) by default, or the sources. */
export const SOURCES = ['package', 'source'] as const;

/** BENCH_FROM, checked. */
export function benchFrom(): (typeof SOURCES)[number] {
  const from = process.env.BENCH_FROM ?? SOURCES[0];
  const known = SOURCES.find((s) => s === from);
  if (known === undefined) throw new Error(`BENCH_FROM must be one of ${SOURCES.join(', ')}; got "${from}"`);
  return known;
}
