// Outputs of a job the real engine server ran (ComfyUI, CPU, started by the
// test through ../shared/comfyui/run-comfyui.sh), through the v2 API: a still
// image, animations (SaveAnimatedPNG and SaveAnimatedWEBP list them as
// `images` with `animated: [true]`: they are video), shown text, and a
// preview's temp file that is no output; each output downloads as the file
// the server wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComfyEngine } from '../engine/comfyui/engine.ts';
import type { Workflow } from '../engine/types.ts';
import { type Harness, startHarness } from './helpers/harness.ts';
import { submitOk, waitForJob } from './helpers/jobs.ts';
import { type RealComfyUI, startRealComfyUI } from './helpers/real-comfyui.ts';
import { uniqueColor } from './suites/engine-fixtures.ts';

let server: RealComfyUI;
let h: Harness;
beforeAll(async () => {
  server = await startRealComfyUI();
  h = await startHarness('node-server', { engine: createComfyEngine({ workers: [server.url], healthIntervalMs: 200 }) });
}, 20 * 60_000);
afterAll(async () => {
  await h?.close();
  await server?.stop();
});

const workflow = (): Workflow => ({
  img: { class_type: 'EmptyImage', inputs: { width: 8, height: 6, batch_size: 3, color: uniqueColor() } },
  still: { class_type: 'SaveImage', inputs: { images: ['img', 0], filename_prefix: 'still' } },
  apng: { class_type: 'SaveAnimatedPNG', inputs: { images: ['img', 0], filename_prefix: 'anim', fps: 6, compress_level: 4 } },
  webp: {
    class_type: 'SaveAnimatedWEBP',
    inputs: { images: ['img', 0], filename_prefix: 'anim', fps: 6, lossless: true, quality: 80, method: 'default' },
  },
  preview: { class_type: 'PreviewImage', inputs: { images: ['img', 0] } },
  text: { class_type: 'PreviewAny', inputs: { source: 'shown text' } },
});

const SIGNATURES: Record<string, (b: Uint8Array) => boolean> = {
  'image/png': (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47,
  'image/webp': (b) => new TextDecoder().decode(b.subarray(0, 4)) === 'RIFF' && new TextDecoder().decode(b.subarray(8, 12)) === 'WEBP',
};

describe('outputs of a job on the real engine server', () => {
  it('types each output as the server made it: stills are images, animations video, shown text text; previews are no output', async () => {
    const submitted = await submitOk(h, workflow());
    const job = await waitForJob(h, submitted.id, ['succeeded', 'failed'], 120_000);
    expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    const rows = job.outputs
      .map((o: any) => [o.node_id, o.type, o.content_type])
      .sort((a: string[], b: string[]) => a.join().localeCompare(b.join()));
    expect(rows).toEqual([
      ['apng', 'video', 'image/png'],
      ['still', 'image', 'image/png'],
      ['still', 'image', 'image/png'],
      ['still', 'image', 'image/png'],
      ['text', 'text', 'text/plain; charset=utf-8'],
      ['webp', 'video', 'image/webp'],
    ]);
    for (const output of job.outputs) {
      const res = await h.fetch(output.url);
      expect(res.status).toBe(200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(bytes.length).toBe(output.size_bytes);
      const signature = SIGNATURES[output.content_type];
      if (signature) expect(signature(bytes), `${output.node_id} ${output.name}`).toBe(true);
      else expect(new TextDecoder().decode(bytes)).toBe('shown text');
    }
  });

  it("a repeated workflow, served from the server's cache, has the first run's outputs, byte for byte", async () => {
    const w = workflow();
    const run = async () => {
      const job = await waitForJob(h, (await submitOk(h, w)).id, ['succeeded', 'failed'], 120_000);
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      return job;
    };
    const first = await run();
    const again = await run();
    const view = async (job: any) =>
      Promise.all(
        job.outputs.map(async (o: any) => [
          o.node_id,
          o.name,
          o.type,
          o.hash,
          Buffer.from(await (await h.fetch(o.url)).arrayBuffer()).toString('base64'),
        ]),
      ).then((rows) => rows.sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`)));
    expect(await view(again)).toEqual(await view(first));
    expect(again.outputs).toHaveLength(6);
  });
});
