// The fake worker's node cache behaves as the real server's: an identical
// second prompt runs nothing (every node in execution_cached, no executing)
// and shows the first run's files again without writing one; only what
// consecutive prompts share is kept; a node loading a file changes with the
// file; a node whose result is not a function of its inputs always runs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../engine/types.ts';
import { createImageBatch } from '../lib/image/batch.ts';
import { imageBatchToPng } from '../lib/image/png-batch.ts';
import { type FakeWorker, startFakeWorker } from './fakes/comfyui-worker.ts';
import type { RecordedFrame } from './fakes/ws-recorder.ts';
import { type FakeWorkerClient, fakeWorkerClient } from './helpers/fake-worker-client.ts';
import { sumWorkflow, waitWorkflow } from './helpers/local-nodes.ts';

let w: FakeWorker;
let c: FakeWorkerClient;
beforeEach(async () => {
  w = await startFakeWorker();
  c = fakeWorkerClient(w);
});
afterEach(async () => {
  c.close();
  await w.close();
});

/** A prompt's messages as `type` or `type:node`, status and progress_state left out. */
const messages = (frames: RecordedFrame[]) =>
  frames.flatMap((f) => (['executing', 'executed'].includes(f.type) ? [`${f.type}:${f.data!.node}`] : f.type === 'progress_state' ? [] : [f.type]));
const cachedOf = (frames: RecordedFrame[]) => frames.find((f) => f.type === 'execution_cached')!.data!.nodes;

const png = (value: number) => {
  const img = createImageBatch(2, 2, 1);
  img.data.fill(value);
  return imageBatchToPng(img, 0);
};

describe('the node cache', () => {
  it("an identical second prompt: every node cached, no executing, the first run's files shown again, none written", async () => {
    const { id, r } = await c.connect();
    const prompt: Workflow = {
      ...sumWorkflow('n'),
      e: { class_type: 'EmptyImage', inputs: { width: 2, height: 2, batch_size: 1, color: 0x123456 } },
      s: { class_type: 'SaveImage', inputs: { images: ['e', 0], filename_prefix: 'kept' } },
    };
    const first = await c.submit(prompt, id);
    await c.ended(r, first.prompt_id);
    const files = w.files.list('output');
    const second = await c.submit(prompt, id);
    await c.ended(r, second.prompt_id);

    const frames = r.ofPrompt(second.prompt_id);
    expect(cachedOf(frames)).toEqual(Object.keys(prompt));
    expect(messages(frames)).toEqual(['execution_start', 'execution_cached', 'executed:n4', 'executed:s', 'execution_success', 'executing:null']);
    // Each executed is followed by its node's finished progress_state, as the real server's cached branch does.
    const shown = frames.findIndex((f) => f.type === 'executed' && f.data!.node === 's');
    expect((frames[shown + 1].data as any).nodes.s).toMatchObject({ state: 'finished', value: 1, max: 1 });

    const executed = (p: string) => r.ofPrompt(p).flatMap((f) => (f.type === 'executed' ? [[f.data!.node, f.data!.output]] : []));
    expect(executed(second.prompt_id)).toEqual(executed(first.prompt_id));
    expect(executed(first.prompt_id)).toContainEqual(['s', { images: [{ filename: 'kept_00001_.png', subfolder: '', type: 'output' }] }]);
    expect(w.files.list('output')).toEqual(files);
    expect(w.runs.Show).toBe(1);
    const history = (p: string) => w.queue.history.get(p)!;
    expect(history(second.prompt_id).outputs).toEqual(history(first.prompt_id).outputs);
    expect(history(second.prompt_id).meta).toEqual(history(first.prompt_id).meta);
    expect(history(second.prompt_id).status.messages.map(([type]) => type)).toEqual(['execution_start', 'execution_cached', 'execution_success']);
  });

  it('keeps only what consecutive prompts share: a prompt in between with other nodes makes the first run again', async () => {
    const { id, r } = await c.connect();
    for (const prompt of [sumWorkflow('a'), sumWorkflow('b', 7, 8), sumWorkflow('a')]) {
      const p = await c.submit(prompt, id);
      await c.ended(r, p.prompt_id);
      expect(cachedOf(r.ofPrompt(p.prompt_id))).toEqual([]);
    }
    expect(w.runs.Show).toBe(3);
  });

  it('a node loading a file is cached while the file is the same, and runs again once it changed', async () => {
    const { id, r } = await c.connect();
    const upload = async (bytes: Uint8Array, overwrite: boolean) => {
      const form = new FormData();
      form.set('image', new Blob([bytes], { type: 'image/png' }), 'in.png');
      if (overwrite) form.set('overwrite', 'true');
      expect((await fetch(`${w.url}/upload/image`, { method: 'POST', body: form })).status).toBe(200);
    };
    const prompt: Workflow = {
      l: { class_type: 'LoadImage', inputs: { image: 'in.png' } },
      s: { class_type: 'SaveImage', inputs: { images: ['l', 0], filename_prefix: 'loaded' } },
    };
    const run = async () => {
      const p = await c.submit(prompt, id);
      await c.ended(r, p.prompt_id);
      return cachedOf(r.ofPrompt(p.prompt_id));
    };
    await upload(png(0.2), false);
    expect(await run()).toEqual([]);
    expect(await run()).toEqual(['l', 's']);
    await upload(png(0.9), true);
    expect(await run()).toEqual([]);
    expect(w.files.list('output').sort()).toEqual(['loaded_00001_.png', 'loaded_00002_.png']);
  });

  it('a node that is not cacheable runs every time, and so do the nodes after it', async () => {
    const { id, r } = await c.connect();
    const runs: Array<[cached: string[], executing: string[]]> = [
      [[], ['w1', 'w2', 'w3']],
      [['w1'], ['w2', 'w3']],
    ];
    for (const [cached, executing] of runs) {
      const p = await c.submit(waitWorkflow(1, 1, 1), id);
      await c.ended(r, p.prompt_id);
      expect(cachedOf(r.ofPrompt(p.prompt_id))).toEqual(cached);
      expect(r.ofPrompt(p.prompt_id).flatMap((f) => (f.type === 'executing' && f.data!.node ? [f.data!.node] : []))).toEqual(executing);
    }
  });
});
