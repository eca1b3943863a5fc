// What every server process of bench/adapters.ts does, whatever its runtime:
// the service on SQLite + fs blobs under GRAPHRUN_DATA behind the runtime's
// adapter, one succeeded EmptyImage -> SaveImage job, and beside it a bare
// server of the same runtime answering every request with the status, headers
// and bytes the adapter gave for that job's GET once. Prints one line
// `BENCH_READY {json}`; stops when stdin closes or on SIGTERM.
import type { Service, Storage } from '../index.ts';
import type { BlobStore } from '../storage/types.ts';
import { serviceUnderData, stopWithParent } from '../test/runtime/entry.ts';

export interface CapturedResponse {
  status: number;
  /** Without date, connection, keep-alive, transfer-encoding; content-length set to the body's size. */
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface BenchTarget {
  storage(filename: string, blobs: BlobStore): Promise<Storage>;
  serve(service: Service): Promise<{ url: string; stop(): Promise<void> }>;
  serveBare(response: CapturedResponse): Promise<{ url: string; stop(): Promise<void> }>;
}

export interface BenchReady {
  url: string;
  bareUrl: string;
  path: string;
  bytes: number;
  outputs: number;
}

const WORKFLOW = {
  e: { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 0x336699 } },
  s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'bench' } },
};

async function succeededJob(url: string): Promise<{ path: string; response: Response; outputs: number }> {
  const submitted = await fetch(`${url}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: WORKFLOW }),
  });
  if (submitted.status !== 201) throw new Error(`submit answered ${submitted.status}: ${await submitted.text()}`);
  const { id } = (await submitted.json()) as { id: string };
  const path = `/api/v2/jobs/${id}`;
  for (let tries = 0; tries < 500; tries++) {
    const response = await fetch(`${url}${path}`);
    const job = (await response.clone().json()) as { status: string; outputs: unknown[] };
    if (job.status === 'succeeded') return { path, response, outputs: job.outputs.length };
    if (['failed', 'canceled', 'expired'].includes(job.status)) throw new Error(`the job ended ${job.status}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the job did not finish');
}

const DROPPED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

async function capture(response: Response): Promise<CapturedResponse> {
  const body = new Uint8Array(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) if (!DROPPED.has(name)) headers[name] = value;
  headers['content-length'] = String(body.byteLength);
  return { status: response.status, headers, body };
}

export async function runBenchServer(target: BenchTarget): Promise<void> {
  const service = await serviceUnderData(target.storage);
  const server = await target.serve(service);
  const job = await succeededJob(server.url);
  const captured = await capture(job.response);
  const bare = await target.serveBare(captured);
  stopWithParent(async () => {
    await Promise.all([server.stop(), bare.stop()]);
    await service.close();
  });
  const ready: BenchReady = { url: server.url, bareUrl: bare.url, path: job.path, bytes: captured.body.byteLength, outputs: job.outputs };
  console.log(`BENCH_READY ${JSON.stringify(ready)}`);
}
