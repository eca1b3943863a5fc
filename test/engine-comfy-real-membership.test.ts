// Engine servers that come and go, against the real engine server (ComfyUI,
// CPU, non-ML nodes, started through ../shared/comfyui/run-comfyui.sh): a
// worker engine that starts with no server is not ready; the server added at
// run time is warmed up (a non-ML warm-up: the real server has no model
// file) and runs a job; /free is accepted; drained and removed, it leaves the
// engine not ready again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ComfyEngine, createComfyEngine } from '../engine/comfyui/engine.ts';
import { createFakeExecutionContext } from './helpers/fake-execution-context.ts';
import { until } from './helpers/jobs.ts';
import { type RealComfyUI, startRealComfyUI } from './helpers/real-comfyui.ts';
import { uniqueColor } from './suites/engine-fixtures.ts';

let server: RealComfyUI;
let engine: ComfyEngine | undefined;
const log: string[] = [];
beforeAll(async () => {
  server = await startRealComfyUI();
}, 20 * 60_000);
afterAll(async () => {
  await engine?.close();
  await server?.stop();
});

describe('the real engine server added at run time', () => {
  it('is warmed up, runs a job, takes /free, and leaves after a drain', async () => {
    engine = createComfyEngine({
      workers: [],
      healthIntervalMs: 200,
      crossCheckMs: 200,
      warmup: {
        1: { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: uniqueColor() } },
        2: { class_type: 'PreviewImage', inputs: { images: ['1', 0] } },
      },
      log: (message) => void log.push(message),
    });
    expect(engine.readiness()).toMatchObject({ state: 'unavailable', detail: expect.stringMatching(/no engine server/) });
    engine.addServer(server.url);
    await until('ready after the warm-up', () => engine!.readiness().state === 'ready', 60_000);
    expect(log).toContain('worker warmed up');

    const run = createFakeExecutionContext();
    const prefix = `joined-${crypto.randomUUID()}`;
    await engine.execute(
      {
        id: crypto.randomUUID(),
        account_id: 'acct',
        workflow: {
          1: { class_type: 'EmptyImage', inputs: { width: 4, height: 3, batch_size: 1, color: uniqueColor() } },
          2: { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: prefix } },
        },
      },
      run.ctx,
    );
    expect(run.outputs.map((o) => o.content_type)).toEqual(['image/png']);
    expect(engine.servers()).toMatchObject([{ url: server.url, healthy: true, busy: 0, state: 'active', warming: false }]);

    await engine.freeServer(server.url);
    expect(engine.servers()[0].models).toEqual([]);
    await engine.drainServer(server.url);
    await engine.removeServer(server.url);
    expect(engine.servers()).toEqual([]);
    expect(engine.readiness().state).toBe('unavailable');
  }, 120_000);
});
