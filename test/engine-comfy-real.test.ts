// The worker engine against the real engine server (ComfyUI, CPU, non-ML
// nodes, started by the test through ../shared/comfyui/run-comfyui.sh): the
// shared engine conformance suite, as it runs against the local engine and
// the fake worker (the real server streams no preview for PreviewImage); and
// a restart of graphrun while the server runs a job's prompt.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import { createService, type Service, silentLogger } from '../index.ts';
import { createFsBlobStore } from '../storage/fs/blob-store.ts';
import { createSqliteStorage } from '../storage/sql/sqlite.ts';
import { until } from './helpers/jobs.ts';
import { startRealComfyUI } from './helpers/real-comfyui.ts';
import { SseReader } from './helpers/sse-client.ts';
import { engineSuite } from './suites/engine.ts';
import { uniqueColor } from './suites/engine-fixtures.ts';

const server = await startRealComfyUI();
afterAll(() => server.stop());

engineSuite(
  'comfyui (the real engine server)',
  async () => {
    const engine = createComfyEngine({ workers: [server.url], healthIntervalMs: 200 });
    return { engine, cleanup: () => engine.close() };
  },
  { previewImageStreams: false },
);

describe('graphrun restarted while the real engine server runs its job', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function open(dir: string) {
    const blobs = await createFsBlobStore({ dir: join(dir, 'blobs') });
    const storage = await createSqliteStorage({ filename: join(dir, 'graphrun.db'), blobs });
    const engine = createComfyEngine({ workers: [server.url], healthIntervalMs: 200 });
    return createService({ storage, engine, logger: silentLogger, sweepIntervalMs: 0 });
  }
  const call = (service: Service, path: string, init?: RequestInit) => service.fetch(new Request(`http://graphrun.test${path}`, init));

  it('the server runs the prompt once: the next start follows that run to its output instead of sending it again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'graphrun-real-restart-'));
    dirs.push(dir);
    const prefix = `restart-${crypto.randomUUID()}`;
    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 640, height: 640, batch_size: 1, color: uniqueColor() } },
      // Seconds of CPU on the server: long enough to stop graphrun while it computes.
      '2': { class_type: 'ImageBlur', inputs: { image: ['1', 0], blur_radius: 12, sigma: 10 } },
      '3': { class_type: 'ImageInvert', inputs: { image: ['2', 0] } },
      '4': { class_type: 'SaveImage', inputs: { images: ['3', 0], filename_prefix: prefix } },
    };
    const first = await open(dir);
    const res = await call(first, '/api/v2/jobs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow }),
    });
    const { id } = (await res.json()) as { id: string };
    expect(res.status).toBe(201);
    // Stopped while the blur computes on the server, after EmptyImage ran there.
    const events = new SseReader((await call(first, `/api/v2/jobs/${id}/events`)).body!);
    for (;;) {
      const event = await events.nextEvent(120_000);
      if (!event) throw new Error('the stream ended before the blur ran');
      if (event.event === 'progress' && event.json.current_node === '2') break;
    }
    await first.close();

    const second = await open(dir);
    try {
      let job: { status: string; outputs: unknown[] };
      await until(
        'the job ends',
        async () => {
          job = (await (await call(second, `/api/v2/jobs/${id}`)).json()) as typeof job;
          return ['succeeded', 'failed', 'canceled'].includes(job.status);
        },
        120_000,
      );
      expect(job!.status).toBe('succeeded');
      expect(job!.outputs).toHaveLength(1);
    } finally {
      await second.close();
    }
    // Sent again, the prompt would have run anew, EmptyImage served from the server's cache, and its history say so.
    const history = (await (await fetch(`${server.url}/history/${id}`)).json()) as Record<
      string,
      { status: { messages: [string, { nodes?: string[] }][] } }
    >;
    const cached = history[id].status.messages.find(([type]) => type === 'execution_cached')?.[1].nodes;
    expect(cached).toEqual([]);
    expect((await readdir(join(server.base, 'output'))).filter((f) => f.startsWith(prefix))).toHaveLength(1);
  }, 240_000);
});
