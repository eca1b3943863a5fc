// A fake video vendor: a real HTTP server speaking the video contract the
// upstream provider forwards to (POST /videogen/multiframe, GET
// /videogen/tasks/{id}, Bearer token) and serving its outputs. Each created
// task takes the next scripted behaviour: success after queueing and
// processing, a refused creation, a creation that hangs, a task that fails,
// failing state polls, or an output that cannot be downloaded.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type VideoVendorBehaviour =
  | { kind: 'ok' }
  | { kind: 'create-status'; status: number }
  | { kind: 'create-hang' }
  | { kind: 'task-failed' }
  | { kind: 'poll-errors'; count: number }
  | { kind: 'output-missing' };

/** Words of a vendor failure that must never reach the service's clients. */
export const VIDEO_VENDOR_SECRET = 'vendor-internal-video-detail-5c1e';

export interface VendorCall {
  method: string;
  path: string;
  authorization: string | undefined;
  body: any;
}

export interface FakeVideoVendor {
  /** The base the upstream provider is given. */
  url: string;
  token: string;
  calls: VendorCall[];
  /** The bytes every successful task's output serves (a fake MP4, big enough to arrive in several chunks). */
  video: Uint8Array;
  script(...behaviours: VideoVendorBehaviour[]): void;
  close(): Promise<void>;
}

export async function startFakeVideoVendor(token = 'video-vendor-token'): Promise<FakeVideoVendor> {
  const queue: VideoVendorBehaviour[] = [];
  const calls: VendorCall[] = [];
  const tasks = new Map<string, { behaviour: VideoVendorBehaviour; polls: number }>();
  const video = new Uint8Array(300_000).map((_, i) => (i * 31 + 7) & 255);
  video.set([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]); // "....ftyp"
  let next = 0;
  let base = '';

  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const oops = (res: ServerResponse, status: number) =>
    json(res, status, { message: `internal: ${VIDEO_VENDOR_SECRET}`, details: [VIDEO_VENDOR_SECRET] });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let text = '';
    for await (const chunk of req) text += chunk;
    const path = req.url ?? '';
    calls.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body: text ? JSON.parse(text) : undefined });
    const output = /^\/outputs\/(\w+)$/.exec(path);
    if (output) {
      // Outputs are signed URLs: no token asked (and none must be sent).
      const task = tasks.get(output[1]);
      if (!task || task.behaviour.kind === 'output-missing') return oops(res, 404);
      return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length }).end(video);
    }
    if (req.headers.authorization !== `Bearer ${token}`) return oops(res, 401);
    if (req.method === 'POST' && path === '/videogen/multiframe') {
      const behaviour = queue.shift() ?? { kind: 'ok' };
      if (behaviour.kind === 'create-status') return oops(res, behaviour.status);
      if (behaviour.kind === 'create-hang') return; // never answers
      const id = `v${++next}`;
      tasks.set(id, { behaviour, polls: 0 });
      return json(res, 200, { task_id: id, state: 'created' });
    }
    const poll = /^\/videogen\/tasks\/(\w+)$/.exec(path);
    if (req.method === 'GET' && poll) {
      const task = tasks.get(poll[1]);
      if (!task) return oops(res, 404);
      const n = ++task.polls;
      const b = task.behaviour;
      if (b.kind === 'poll-errors' && n <= b.count) return oops(res, 503);
      const step = b.kind === 'poll-errors' ? n - b.count : n;
      if (b.kind === 'task-failed' && step >= 2)
        return json(res, 200, { task_id: poll[1], state: 'failed', error: { message: VIDEO_VENDOR_SECRET } });
      const state = step === 1 ? 'queueing' : step === 2 ? 'processing' : 'success';
      const body: Record<string, unknown> = { task_id: poll[1], state };
      if (state === 'success') body.output = { url: `${base}/outputs/${poll[1]}`, content_type: 'video/mp4' };
      return json(res, 200, body);
    }
    return oops(res, 404);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/videogen`,
    token,
    calls,
    video,
    script: (...behaviours) => void queue.push(...behaviours),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
