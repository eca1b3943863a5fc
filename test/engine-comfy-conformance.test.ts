// The worker engine against the shared engine conformance suite: each test
// gets a fresh engine pointed at a fresh fake worker (a real HTTP + WebSocket
// server executing with the local engine's nodes).
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import { startFakeWorker } from './fakes/comfyui-worker.ts';
import { engineSuite } from './suites/engine.ts';

engineSuite(
  'comfyui (fake worker)',
  async () => {
    const worker = await startFakeWorker();
    const engine = createComfyEngine({ workers: [worker.url], healthIntervalMs: 200 });
    return {
      engine,
      cleanup: async () => {
        await engine.close();
        await worker.close();
      },
    };
  },
  // As the real server: PreviewImage sends no binary preview.
  { previewImageStreams: false },
);
