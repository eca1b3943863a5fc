// The HTTP + WebSocket conformance suite every adapter runs on its runtime:
// it talks to a running server over real sockets only (fetch, node:http, ws),
// so the same cases hold for Node, Express, Bun and Deno servers alike.
//
// What `start` must give:
// - `start()` — a server with NO auth (no token, no accounts): every case of
//   the main block sends no key and expects to be let in.
// - `start({ token })` — a second server that requires exactly that token
//   (the service's `token` option); only the "auth on" block uses it.
// - The engine is the local one with the built-in nodes (EmptyImage,
//   SaveImage), the default upload limit (110 MB) or more, and any storage.
// - The /proxy generation endpoints on their defaults: the local music and
//   video providers, two music generations per account at once, and no
//   credits provider (every account may generate).
// - `base` is the URL the service answers at, mount prefix included and no
//   trailing slash (e.g. http://127.0.0.1:1234/graph); WebSockets are at `${base}/ws`.
// - Behind a deployment gateway (runtime/deployment-gateway.ts): the service
//   above is the deployment 'default', and `${base}/deployment/sdxl` a
//   second one on its own storage, with the same token and the operator
//   token SDXL_OPERATOR_TOKEN.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { DEFAULT_MUSIC_CONCURRENCY } from '../../core/config.ts';
import { blake3Of, expectEnvelope, randomBytes, trickyPayload, UUID } from '../helpers/assets.ts';
import { uploadForm } from '../helpers/harness.ts';
import { expectJobShape, heavyWorkflow, PNG_SIGNATURE, saveImageWorkflow } from '../helpers/jobs.ts';
import { blake3Hash, expectWav, MUSIC_PATH, musicForm, ndjsonEvents } from '../helpers/music.ts';
import { readMetrics } from '../helpers/prometheus.ts';
import { eventsOf, SseReader } from '../helpers/sse-client.ts';
import { MULTIFRAME, multiframe, taskPath } from '../helpers/video.ts';
import { connectWs, refusedUpgrade, type WsClient } from '../helpers/ws-client.ts';
import { SDXL_OPERATOR_TOKEN } from '../runtime/deployment-gateway.ts';
import {
  abortedUpload,
  brokenHandshake,
  hashStream,
  json,
  oversizedUpload,
  pollJob,
  pollJson,
  streamingUpload,
  uploadsFromAnotherProcess,
  whileBusy,
} from '../runtime/raw-clients.ts';
import type { UploadBatch } from '../runtime/upload-clients.ts';

export interface RuntimeServer {
  /** Where the service answers, mount prefix included, no trailing slash. */
  base: string;
  close(): Promise<void>;
}

export type StartRuntimeServer = (opts?: { token?: string }) => Promise<RuntimeServer>;

const MiB = 1024 * 1024;
/** Mount prefix of the server, '' at the root: job links are host-relative and start with it. */
const prefixOf = (base: string) => new URL(base).pathname.replace(/\/+$/, '');
const wsBase = (base: string) => base.replace(/^http/, 'ws');

/**
 * Uploads a service refuses before reading their body, from a client process
 * of its own: 20 one after another and 20 at once, of 40 B and of 2 MiB each.
 */
const earlyRefusals = (url: string, field: string, headers: Record<string, string>): UploadBatch[] =>
  [40, 2 * MiB].flatMap((size) => [false, true].map((concurrent) => ({ url, field, size, count: 20, concurrent, headers })));

/** Each outcome of each batch: the status and the error code its JSON body carries (v2 envelope or cloud shape), or the client's error. */
function outcomesOf(results: Awaited<ReturnType<typeof uploadsFromAnotherProcess>>): string[] {
  return results.flat().map((o) => {
    if ('error' in o) return `client error ${o.error}`;
    const body = JSON.parse(o.body);
    return `${o.status} ${body.error?.code ?? body.code}`;
  });
}

/** Cases a runtime may leave out, each only for a limitation of the runtime itself. */
export type RuntimeCase = 'streamed-content-length';

export interface RuntimeConformanceOptions {
  /** Cases skipped on this runtime, each with the limitation that makes it fail (named in the test title). */
  skip?: Partial<Record<RuntimeCase, string>>;
}

export function runtimeConformance(label: string, start: StartRuntimeServer, options: RuntimeConformanceOptions = {}): void {
  const test = (id: RuntimeCase, name: string, fn: () => Promise<void>) => {
    const reason = options.skip?.[id];
    if (reason === undefined) it(name, fn);
    else it.skip(`${name} [skipped: ${reason}]`, fn);
  };

  describe(`runtime conformance: ${label}`, () => {
    let server: RuntimeServer;
    let base: string;
    beforeAll(async () => {
      server = await start();
      base = server.base;
    });
    afterAll(() => server?.close());

    describe('v2 assets', () => {
      const bytes = trickyPayload();
      let asset: any;

      it('uploads binary bytes as multipart: 201, hash of the bytes, a link under base', async () => {
        const res = await fetch(`${base}/api/v2/assets`, { method: 'POST', body: uploadForm(bytes, { file_path: 'inputs/tricky.bin' }) });
        asset = await json(res);
        expect({ status: res.status, body: asset }).toMatchObject({ status: 201 });
        expect(asset.id).toMatch(UUID);
        expect(asset.hash).toBe(await blake3Of(bytes));
        expect(asset.size_bytes).toBe(bytes.length);
        expect(asset.file_path).toBe('inputs/tricky.bin');
        expect(asset.created_new).toBe(true);
        expect(asset.url.startsWith(`${base}/api/v2/assets/${asset.id}/content`)).toBe(true);
        // The same bytes again: deduplicated.
        const again = await fetch(`${base}/api/v2/assets`, { method: 'POST', body: uploadForm(bytes) });
        expect(again.status).toBe(200);
        expect((await json(again)).created_new).toBe(false);
      });

      it('downloads the same bytes, with their Content-Type', async () => {
        const res = await fetch(asset.url);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/octet-stream');
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
      });

      it('answers a Range with 206 and exactly those bytes', async () => {
        const res = await fetch(asset.url, { headers: { range: 'bytes=3-20' } });
        expect(res.status).toBe(206);
        expect(res.headers.get('content-range')).toBe(`bytes 3-20/${bytes.length}`);
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes.subarray(3, 21));
      });

      test('streamed-content-length', 'sends Content-Length with streamed content, whole and ranged', async () => {
        const whole = await fetch(asset.url);
        expect(whole.headers.get('content-length')).toBe(String(bytes.length));
        await whole.arrayBuffer();
        const ranged = await fetch(asset.url, { headers: { range: 'bytes=3-20' } });
        expect(ranged.headers.get('content-length')).toBe('18');
        await ranged.arrayBuffer();
      });

      it('answers HEAD with the headers of a GET and no body', async () => {
        const res = await fetch(asset.url, { method: 'HEAD' });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-length')).toBe(String(bytes.length));
        expect(res.headers.get('accept-ranges')).toBe('bytes');
        expect((await res.arrayBuffer()).byteLength).toBe(0);
      });

      it('reads the asset back by id, its link again under base', async () => {
        const res = await fetch(`${base}/api/v2/assets/${asset.id}`);
        const body = await json(res);
        expect(res.status).toBe(200);
        expect(body).toMatchObject({ id: asset.id, hash: asset.hash, size_bytes: bytes.length });
        expect(body.url.startsWith(`${base}/`)).toBe(true);
      });
    });

    describe('v2 jobs', () => {
      it('runs EmptyImage -> SaveImage: 201, polled to succeeded, its events streamed to the end, its PNG downloadable', async () => {
        const res = await fetch(`${base}/api/v2/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workflow: saveImageWorkflow(0x2a7f3c, 8, 4, 'runtime') }),
        });
        const created = await json(res);
        expect({ status: res.status, body: created }).toMatchObject({ status: 201 });
        expectJobShape(created, prefixOf(base));
        expect(new URL(created.urls.self, base).href).toBe(`${base}/api/v2/jobs/${created.id}`);

        const events = await fetch(`${base}/api/v2/jobs/${created.id}/events`, { headers: { accept: 'text/event-stream' } });
        expect(events.status).toBe(200);
        expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
        const items = eventsOf(await new SseReader(events.body!).readToEnd(20_000));
        const statuses = items.filter((e) => e.event === 'status').map((e) => e.json.status);
        expect(statuses.at(-1)).toBe('succeeded');
        expect(items.at(-1)!.event).toBe('status');
        const outputEvents = items.filter((e) => e.event === 'output');
        expect(outputEvents).toHaveLength(1);
        expect(outputEvents[0].json.url.startsWith(`${base}/`)).toBe(true);

        const job = await pollJob(base, created.id);
        expect(job.status).toBe('succeeded');
        expectJobShape(job, prefixOf(base));
        expect(job.outputs).toHaveLength(1);
        const [output] = job.outputs;
        expect(output.content_type).toBe('image/png');
        expect(output.url.startsWith(`${base}/`)).toBe(true);
        const png = await fetch(output.url);
        expect(png.status).toBe(200);
        expect(png.headers.get('content-type')).toBe('image/png');
        const pngBytes = new Uint8Array(await png.arrayBuffer());
        expect([...pngBytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
        expect(pngBytes.length).toBe(output.size_bytes);
        expect(await blake3Of(pngBytes)).toBe(output.hash);
      });

      it('computes off the thread that serves requests: a computing job shows its node, and a cancel ends it before the rest', async () => {
        const res = await fetch(`${base}/api/v2/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workflow: heavyWorkflow() }),
        });
        const created = await json(res);
        expect(res.status).toBe(201);
        const events = await fetch(`${base}/api/v2/jobs/${created.id}/events`, { headers: { accept: 'text/event-stream' } });
        const sse = new SseReader(events.body!);
        for (;;) {
          const event = await sse.nextEvent(60_000);
          if (!event) throw new Error('the stream ended before a scaling node ran');
          if (event.event === 'progress' && /^s\d$/.test(event.json?.current_node ?? '')) break;
        }
        // Answered while the node computes: on the serving thread, this would wait for every node.
        const now = await json(await fetch(`${base}/api/v2/jobs/${created.id}`));
        expect(now.status).toBe('running');
        expect(now.progress.current_node).toMatch(/^s[0-8]$/);
        const cancel = await fetch(`${base}/api/v2/jobs/${created.id}/cancel`, { method: 'POST' });
        expect(cancel.status).toBeLessThan(300);
        const statuses = eventsOf(await sse.readToEnd(60_000))
          .filter((e) => e.event === 'status')
          .map((e) => e.json.status);
        expect(statuses.at(-1)).toBe('canceled');
      });
    });

    describe('deployments', () => {
      it('serves the deployment sdxl under /deployment/sdxl: its own jobs, links under its prefix, and its condition', async () => {
        const sdxl = `${base}/deployment/sdxl`;
        const operator = { authorization: `Bearer ${SDXL_OPERATOR_TOKEN}` };
        const submit = (at: string) =>
          fetch(`${at}/api/v2/jobs`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ workflow: saveImageWorkflow(0x224466) }),
          });
        const created = await submit(sdxl);
        expect(created.status).toBe(201);
        const job = await json(created);
        const done = await pollJson(`${sdxl}/api/v2/jobs/${job.id}`, (j) => j.status === 'succeeded' || j.status === 'failed');
        expect(done.status).toBe('succeeded');
        // Links carry the address the job was asked on; the bytes come from the deployment's own store.
        expect(new URL(done.outputs[0].url, base).pathname).toMatch(new RegExp(`^${prefixOf(base)}/deployment/sdxl/api/v2/assets/`));
        const output = await fetch(new URL(done.outputs[0].url, base));
        expect(output.status).toBe(200);
        expect(Array.from(new Uint8Array(await output.arrayBuffer()).subarray(0, 8))).toEqual(PNG_SIGNATURE);
        // The job is the deployment's: today's URLs (the deployment default) do not know it.
        await expectEnvelope(await fetch(`${base}/api/v2/jobs/${job.id}`), 404, 'not_found');

        const stop = await fetch(`${sdxl}/ops/deployment/stop`, { method: 'POST', headers: operator });
        expect({ status: stop.status, state: (await json(stop)).state }).toEqual({ status: 200, state: 'stopped' });
        await expectEnvelope(await submit(sdxl), 422, 'deployment_stopped');
        const prompt = await fetch(`${sdxl}/api/prompt`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: saveImageWorkflow() }),
        });
        expect({ status: prompt.status, code: (await json(prompt)).code }).toEqual({ status: 422, code: 'deployment_stopped' });
        // The other deployment goes on.
        expect((await submit(base)).status).toBe(201);
        const start = await fetch(`${sdxl}/ops/deployment/start`, { method: 'POST', headers: operator });
        expect({ status: start.status, state: (await json(start)).state }).toEqual({ status: 200, state: 'ready' });
        expect((await submit(sdxl)).status).toBe(201);
      });
    });

    describe('operator surface', () => {
      it('answers /readyz ready, and /metrics in the Prometheus text format counting what this server stored', async () => {
        const ready = await fetch(`${base}/readyz`);
        expect(ready.status).toBe(200);
        expect(await ready.json()).toEqual({ status: 'ready', checks: { storage: { ok: true }, engine: { ok: true, state: 'ready' } } });
        const res = await fetch(`${base}/metrics`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
        const m = readMetrics(await res.text());
        expect(m.value('graphrun_ready')).toBe(1);
        // The v2 upload cases above ran first.
        expect(m.value('graphrun_uploads_total', { surface: 'v2' })).toBeGreaterThan(0);
      });
    });

    describe('errors', () => {
      it('answers an unknown job and an unknown route with 404 in the envelope', async () => {
        await expectEnvelope(await fetch(`${base}/api/v2/jobs/${crypto.randomUUID()}`), 404, 'not_found');
        await expectEnvelope(await fetch(`${base}/api/v2/no-such-route`), 404, 'not_found');
      });

      it('answers a workflow with an unknown node class with 422 invalid_workflow', async () => {
        const res = await fetch(`${base}/api/v2/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workflow: { a: { class_type: 'NoSuchNode', inputs: {} } } }),
        });
        const body = await expectEnvelope(res, 422, 'invalid_workflow');
        expect(body.error.details).toBeTruthy();
      });

      it('refuses an upload declared larger than the limit with 413 in the envelope, before reading it', async () => {
        const { status, body } = await oversizedUpload(`${base}/api/v2/assets`, 200 * MiB);
        expect(status).toBe(413);
        expect(JSON.parse(body).error.code).toBe('payload_too_large');
      });

      it('answers every client an upload it refuses before reading it (a reused Idempotency-Key): 422, never a broken connection', async () => {
        const key = crypto.randomUUID();
        const first = await fetch(`${base}/api/v2/assets`, {
          method: 'POST',
          headers: { 'idempotency-key': key },
          body: uploadForm(randomBytes(64)),
        });
        expect(first.status).toBe(201);
        const results = await uploadsFromAnotherProcess(earlyRefusals(`${base}/api/v2/assets`, 'file', { 'idempotency-key': key }));
        expect(outcomesOf(results)).toEqual(Array(80).fill('422 idempotency_key_reuse'));
      });

      it('stays healthy after a client drops an upload half way', async () => {
        await abortedUpload(`${base}/api/v2/assets`, 8 * MiB, 2 * MiB);
        await abortedUpload(`${base}/api/v2/assets`, 8 * MiB, 100);
        // The next requests on fresh connections are served as usual.
        await expectEnvelope(await fetch(`${base}/api/v2/jobs/${crypto.randomUUID()}`), 404, 'not_found');
        const bytes = randomBytes(4096);
        const res = await fetch(`${base}/api/v2/assets`, { method: 'POST', body: uploadForm(bytes) });
        const asset = await json(res);
        expect(res.status).toBe(201);
        expect(asset.hash).toBe(await blake3Of(bytes));
      });
    });

    describe('large upload', () => {
      it('streams a 20 MiB multipart body in and the same bytes out', async () => {
        const chunks = 20;
        const upload = streamingUpload(chunks);
        const res = await fetch(`${base}/api/v2/assets`, {
          method: 'POST',
          headers: { 'content-type': upload.contentType },
          body: upload.body,
          duplex: 'half',
        } as RequestInit);
        const asset = await json(res);
        expect({ status: res.status, body: asset }).toMatchObject({ status: 201 });
        expect(asset.size_bytes).toBe(chunks * MiB);
        expect(asset.hash).toBe(await upload.digest);
        const download = await fetch(asset.url);
        expect(download.status).toBe(200);
        expect(await hashStream(download.body!)).toEqual({ hash: asset.hash, size: chunks * MiB });
      });
    });

    describe('generation endpoints (/proxy)', () => {
      const music = (fields: Record<string, string>, init: RequestInit = {}) =>
        fetch(`${base}${MUSIC_PATH}`, { method: 'POST', body: musicForm(fields), ...init });

      it('streams music as NDJSON lines: a title first, then audio chunks, then the whole WAV described', async () => {
        const res = await music({ prompt: 'a short calm piano loop', duration: '2' });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/x-ndjson');
        // ndjsonEvents parses every line as JSON as it arrives and checks the body ends on a newline.
        const events: any[] = [];
        for await (const { event } of ndjsonEvents(res)) events.push(event);
        expect(events[0]).toMatchObject({ type: 'title', title: expect.any(String) });
        const chunks = events.filter((e) => e.type === 'audio_chunk');
        expect(chunks.length).toBeGreaterThan(1);
        expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
        expect(events.at(-1)).toMatchObject({ type: 'complete', chunks: chunks.length });
        const wav = new Uint8Array(Buffer.concat(chunks.map((c) => Buffer.from(c.data, 'base64'))));
        expectWav(wav, 2);
        expect(await blake3Hash(wav)).toBe(events.at(-1).hash);
      });

      it('stays healthy when a client leaves a music stream after its first chunk', async () => {
        const abort = new AbortController();
        const res = await music({ prompt: 'a long drone to walk away from', duration: '60' }, { signal: abort.signal });
        expect(res.status).toBe(200);
        const read: string[] = [];
        for await (const { event } of ndjsonEvents(res)) {
          read.push(event.type);
          if (event.type === 'audio_chunk') break;
        }
        expect(read).toEqual(['title', 'audio_chunk']);
        abort.abort();

        // The server let the generation go: the account again runs as many at
        // once as it may (DEFAULT_MUSIC_CONCURRENCY, two or more), one held
        // open while the other is served to its end.
        expect(DEFAULT_MUSIC_CONCURRENCY).toBeGreaterThanOrEqual(2);
        const holder = new AbortController();
        const held = await whileBusy(() => music({ prompt: 'held open', duration: '60' }, { signal: holder.signal }));
        expect(held.status).toBe(200);
        try {
          const next = await whileBusy(() => music({ prompt: 'after the walk-out', duration: '1' }));
          expect(next.status).toBe(200);
          const types: string[] = [];
          for await (const { event } of ndjsonEvents(next)) types.push(event.type);
          expect(types[0]).toBe('title');
          expect(types.at(-1)).toBe('complete');
          expect(types.slice(1, -1).every((t) => t === 'audio_chunk')).toBe(true);
        } finally {
          holder.abort();
        }
        await expectEnvelope(await fetch(`${base}/api/v2/jobs/${crypto.randomUUID()}`), 404, 'not_found');
      });

      it('creates a multi-frame video task from two PNG key frames, polled to success, its APNG downloadable', async () => {
        const res = await fetch(`${base}${MULTIFRAME}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(multiframe()),
        });
        const created = await json(res);
        expect({ status: res.status, body: created }).toMatchObject({
          status: 200,
          body: { state: 'created', task_id: expect.stringMatching(UUID), credits: expect.any(Number) },
        });
        const task = await pollJson(`${base}${taskPath(created.task_id)}`, (t) => t.state === 'success' || t.state === 'failed');
        expect(task).toMatchObject({ task_id: created.task_id, state: 'success', output: { content_type: 'image/apng' } });
        expect(task.output.url.startsWith(`${base}/`)).toBe(true);
        const video = await fetch(task.output.url);
        expect(video.status).toBe(200);
        const bytes = new Uint8Array(await video.arrayBuffer());
        expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
        expect(bytes.length).toBe(task.output.size_bytes);
      });
    });

    describe('cloud surface and /ws', () => {
      let c: WsClient;
      afterAll(() => c?.close());

      it('greets a /ws client with status, then relays the execution of its prompt', async () => {
        // connectWs resolves its path against the URL given: '' keeps any mount prefix.
        c = await connectWs(`${base}/ws`, { clientId: 'runtime-conformance' }, '');
        const status = await c.waitFor('status', (f) => f.kind === 'text' && f.type === 'status');
        expect(c.frames[0]).toBe(status);
        expect(status.kind === 'text' && status.data).toEqual({
          status: { exec_info: { queue_remaining: expect.any(Number) } },
          sid: 'runtime-conformance',
        });

        const res = await fetch(`${base}/api/prompt`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: saveImageWorkflow(0x103050, 4, 4, 'cloud'), client_id: 'runtime-conformance' }),
        });
        const body = await json(res);
        expect({ status: res.status, body }).toMatchObject({ status: 200, body: { prompt_id: expect.stringMatching(UUID), node_errors: {} } });
        const id: string = body.prompt_id;
        await c.waitFor('execution_success', (f) => f.kind === 'text' && f.type === 'execution_success' && f.data.prompt_id === id, 20_000);
        await c.waitFor('final executing', (f) => f.kind === 'text' && f.type === 'executing' && f.data.prompt_id === id && f.data.node === null);
        const types = c.jobMessages(id).map((m) => m.type);
        expect(types[0]).toBe('execution_start');
        expect(types).toContain('executed');
        expect(types.indexOf('execution_success')).toBeGreaterThan(types.indexOf('executed'));

        // The file `executed` names is served by /view, through a redirect under base.
        const executed = c.jobMessages(id).find((m) => m.type === 'executed')!;
        const [image] = executed.data.output.images;
        const view = await fetch(`${base}/api/view?filename=${encodeURIComponent(image.filename)}&type=output`, { redirect: 'manual' });
        expect(view.status).toBe(302);
        const location = new URL(view.headers.get('location')!, base).href;
        expect(location.startsWith(`${base}/`)).toBe(true);
        const png = new Uint8Array(await (await fetch(location)).arrayBuffer());
        expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
      });

      it('answers a broken WebSocket handshake (no Sec-WebSocket-Key) with a 4xx, not a 500', async () => {
        const { status } = await brokenHandshake(`${base}/ws`);
        expect(status).toBeGreaterThanOrEqual(400);
        expect(status).toBeLessThan(500);
        // The server is still there.
        await expectEnvelope(await fetch(`${base}/api/v2/jobs/${crypto.randomUUID()}`), 404, 'not_found');
      });

      it('refuses an upgrade on a path that is not /ws with 404 in the cloud shape', async () => {
        const refused = await refusedUpgrade(`${wsBase(base)}/api/v2/ws`);
        expect(refused.status).toBe(404);
        expect(refused.body).toMatchObject({ code: 'not_found', message: expect.any(String) });
      });
    });

    describe('auth on (a second server started with a token)', () => {
      const token = `runtime-token-${crypto.randomUUID()}`;
      let guarded: RuntimeServer;
      beforeAll(async () => {
        guarded = await start({ token });
      });
      afterAll(() => guarded?.close());

      it('refuses v2 requests without the token (401) and serves them with it', async () => {
        const none = await fetch(`${guarded.base}/api/v2/jobs/${crypto.randomUUID()}`);
        await expectEnvelope(none, 401, 'unauthorized');
        const wrong = await fetch(`${guarded.base}/api/v2/jobs/${crypto.randomUUID()}`, { headers: { authorization: 'Bearer nope' } });
        await expectEnvelope(wrong, 401, 'unauthorized');
        const ok = await fetch(`${guarded.base}/api/v2/jobs/${crypto.randomUUID()}`, { headers: { authorization: `Bearer ${token}` } });
        await expectEnvelope(ok, 404, 'not_found');
      });

      it('answers every client an upload it refuses for a wrong key before reading it: 401 in its surface shape, never a broken connection', async () => {
        const results = await uploadsFromAnotherProcess([
          ...earlyRefusals(`${guarded.base}/api/v2/assets`, 'file', { authorization: 'Bearer wrong-token' }),
          ...earlyRefusals(`${guarded.base}/api/upload/image`, 'image', { 'x-api-key': 'wrong-token' }),
        ]);
        expect(outcomesOf(results)).toEqual(Array(160).fill('401 unauthorized'));
      });

      it('refuses the generation endpoints without the token (401, each surface its shape) and serves them with it', async () => {
        const bearer = { authorization: `Bearer ${token}` };
        const music = (headers: Record<string, string>) =>
          fetch(`${guarded.base}${MUSIC_PATH}`, { method: 'POST', headers, body: musicForm({ prompt: 'guarded', duration: '1' }) });
        const refused = await music({});
        expect({ status: refused.status, body: await json(refused) }).toMatchObject({ status: 401, body: { detail: { code: 'unauthorized' } } });
        const served = await music(bearer);
        expect(served.status).toBe(200);
        const types: string[] = [];
        for await (const { event } of ndjsonEvents(served)) types.push(event.type);
        expect([types[0], types.at(-1)]).toEqual(['title', 'complete']);

        const task = `${guarded.base}${taskPath(crypto.randomUUID())}`;
        const none = await fetch(task);
        expect({ status: none.status, body: await json(none) }).toMatchObject({ status: 401, body: { message: expect.any(String), details: [] } });
        expect((await fetch(task, { headers: bearer })).status).toBe(404);
      });

      it('refuses /ws with a bad token or none (401, cloud shape) and accepts the right one, in the query or a header', async () => {
        for (const query of ['?token=not-the-token', '']) {
          const refused = await refusedUpgrade(`${wsBase(guarded.base)}/ws${query}`);
          expect(refused.status).toBe(401);
          expect(refused.body).toMatchObject({ code: 'unauthorized', message: expect.any(String) });
        }
        // The key as the contract sends it (the query), and as clients that cannot set a query do (a header on the upgrade).
        const ways: Array<[string, Record<string, string>]> = [
          [`?token=${encodeURIComponent(token)}`, {}],
          ['', { 'x-api-key': token }],
          ['', { authorization: `Bearer ${token}` }],
        ];
        for (const [query, headers] of ways) {
          const ws = new WebSocket(`${wsBase(guarded.base)}/ws${query}`, { headers });
          const first = await new Promise<any>((resolve, reject) => {
            ws.once('message', (data) => resolve(JSON.parse(String(data))));
            ws.once('error', reject);
          });
          expect([query, headers, first.type]).toEqual([query, headers, 'status']);
          ws.close();
        }
        const wrongHeader = await refusedUpgrade(`${wsBase(guarded.base)}/ws`, { 'x-api-key': 'not-the-token' });
        expect(wrongHeader.status).toBe(401);
      });
    });
  });
}
