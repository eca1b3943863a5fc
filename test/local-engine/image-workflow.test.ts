// A whole exported-style workflow through the local engine with its built-in
// nodes: load an uploaded PNG, invert and blend it, save and preview it.
import { describe, expect, it } from 'vitest';
import { createLocalEngine } from '../../engine/local/engine.ts';
import { decodePng, encodePng } from '../../lib/png/index.ts';
import { createFakeExecutionContext } from '../helpers/fake-execution-context.ts';

const input = encodePng({ width: 2, height: 1, channels: 3, data: new Uint8Array([255, 0, 0, 0, 0, 255]) });

describe('local engine with the built-in image nodes', () => {
  it('runs LoadImage -> ImageInvert -> SaveImage and PreviewImage on EmptyImage', async () => {
    const engine = createLocalEngine();
    const workflow = {
      '1': { class_type: 'LoadImage', inputs: { image: 'red-blue.png' } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'inv' } },
      '4': { class_type: 'EmptyImage', inputs: { width: 4, height: 4, batch_size: 1, color: 0x00ff00 } },
      '5': { class_type: 'PreviewImage', inputs: { images: ['4', 0] } },
    };
    expect((await engine.validate(workflow)).ok).toBe(true);
    const fake = createFakeExecutionContext({
      assets: [{ id: crypto.randomUUID(), name: 'red-blue.png', content_type: 'image/png', bytes: input }],
    });
    await engine.execute({ id: 'job-1', account_id: 'local', workflow }, fake.ctx);

    const outputs = fake.outputs.filter((o) => !o.temporary);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatchObject({ node_id: '3', type: 'image', content_type: 'image/png' });
    expect(fake.outputs.filter((o) => o.temporary).map((o) => o.node_id)).toEqual(['5']);
    const saved = decodePng(outputs[0].bytes);
    expect([saved.width, saved.height]).toEqual([2, 1]);
    expect(Array.from(saved.data, (v) => Math.round(v * 255))).toEqual([0, 255, 255, 255, 255, 0]);

    const previews = fake.of('preview');
    expect(previews).toHaveLength(1);
    const preview = decodePng(previews[0].bytes);
    expect(Array.from(preview.data.slice(0, 3), (v) => Math.round(v * 255))).toEqual([0, 255, 0]);
    expect(fake.types()[0]).toBe('execution_start');
    await engine.close();
  });

  it('a repeated job commits its own outputs, fed from the cache', async () => {
    const engine = createLocalEngine();
    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 3, height: 2, batch_size: 1, color: 0x123456 } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'again' } },
    };
    const first = createFakeExecutionContext();
    await engine.execute({ id: 'job-a', account_id: 'alice', workflow }, first.ctx);
    const second = createFakeExecutionContext();
    await engine.execute({ id: 'job-b', account_id: 'alice', workflow }, second.ctx);
    expect(second.of('cached')[0].node_ids).toEqual(['1']);
    expect(second.outputs).toHaveLength(1);
    expect(second.outputs[0].bytes).toEqual(first.outputs[0].bytes);
  });

  it("serves one account's results to that account only: another account's identical job runs every node", async () => {
    const engine = createLocalEngine();
    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 3, height: 2, batch_size: 1, color: 0x654321 } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'mine' } },
    };
    await engine.execute({ id: 'job-a', account_id: 'alice', workflow }, createFakeExecutionContext().ctx);
    const other = createFakeExecutionContext();
    await engine.execute({ id: 'job-b', account_id: 'bob', workflow }, other.ctx);
    expect(other.of('cached')).toEqual([{ type: 'cached', node_ids: [] }]);
    expect(other.of('executing').map((e) => e.node_id)).toEqual(['1', '2']);
  });

  it('lists the image nodes in its definitions with the reference IO names', async () => {
    const defs = await createLocalEngine().nodeDefinitions();
    expect(Object.keys(defs.EmptyImage.input.required)).toEqual(['width', 'height', 'batch_size', 'color']);
    expect(Object.keys(defs.SaveImage.input.required)).toEqual(['images', 'filename_prefix']);
    expect(defs.SaveImage.output_node).toBe(true);
    expect(defs.LoadImage.output).toEqual(['IMAGE', 'MASK']);
  });
});
