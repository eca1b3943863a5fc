// The one conformance suite every Engine runs: the local engine today, the
// worker engine (real engine servers driven over the reference's protocol)
// later. It only uses core node classes both have under the same names and IO,
// and asserts the reference's shapes (object_info, node_errors, ui dicts), not
// what one implementation happens to print. Each test gets a fresh engine.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Engine, type EngineReadiness, ExecutionError, type Workflow } from '../../engine/types.ts';
import { encodePng } from '../../lib/png/index.ts';
import { createFakeExecutionContext } from '../helpers/fake-execution-context.ts';
import { type EngineFixture, expectAllNear, invertChain, job, pixelsOf, rejectionOf, rgbOf, uniqueColor, waitUntilReady } from './engine-fixtures.ts';

/** class -> [required input names in order, output types, output_node] as the reference declares them. */
const CORE_NODES: Record<string, [string[], string[], boolean]> = {
  EmptyImage: [['width', 'height', 'batch_size', 'color'], ['IMAGE'], false],
  ImageInvert: [['image'], ['IMAGE'], false],
  ImageScale: [['image', 'upscale_method', 'width', 'height', 'crop'], ['IMAGE'], false],
  ImageCrop: [['image', 'width', 'height', 'x', 'y'], ['IMAGE'], false],
  ImageBlend: [['image1', 'image2', 'blend_factor', 'blend_mode'], ['IMAGE'], false],
  SaveImage: [['images', 'filename_prefix'], [], true],
  PreviewImage: [['images'], [], true],
  LoadImage: [['image'], ['IMAGE', 'MASK'], false],
  PrimitiveInt: [['value'], ['INT'], false],
  PrimitiveString: [['value'], ['STRING'], false],
  StringConcatenate: [['string_a', 'string_b', 'delimiter'], ['STRING'], false],
};

/** EmptyImage -> ImageScale -> SaveImage: a combo input to break, and an output '3' to depend on it. */
const scaleChain = (): Workflow => ({
  '1': { class_type: 'EmptyImage', inputs: { width: 4, height: 4, batch_size: 1, color: 0 } },
  '2': { class_type: 'ImageScale', inputs: { image: ['1', 0], upscale_method: 'bilinear', width: 2, height: 2, crop: 'disabled' } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'suite' } },
});

/** [what, how the workflow is broken, failing node, issue type, input_name when the reference names one]. */
const BROKEN: Array<[string, (w: Workflow) => void, string, string, string?]> = [
  [
    'a missing required input',
    (w) => {
      delete w['1'].inputs.width;
    },
    '1',
    'required_input_missing',
    'width',
  ],
  [
    'a value below min',
    (w) => {
      w['1'].inputs.width = 0;
    },
    '1',
    'value_smaller_than_min',
    'width',
  ],
  [
    'a value above max',
    (w) => {
      w['1'].inputs.height = 1_000_000;
    },
    '1',
    'value_bigger_than_max',
    'height',
  ],
  [
    'a value not in a combo list',
    (w) => {
      w['2'].inputs.upscale_method = 'sharpest';
    },
    '2',
    'value_not_in_list',
    'upscale_method',
  ],
  [
    'a link to a missing node',
    (w) => {
      w['2'].inputs.image = ['99', 0];
    },
    '2',
    'bad_linked_input',
    'image',
  ],
  [
    'a cycle',
    (w) => {
      w['4'] = { class_type: 'ImageInvert', inputs: { image: ['5', 0] } };
      w['5'] = { class_type: 'ImageInvert', inputs: { image: ['4', 0] } };
      w['2'].inputs.image = ['4', 0];
    },
    '4',
    'dependency_cycle',
  ],
];

const isIssue = { type: expect.any(String), message: expect.any(String), details: expect.any(String), extra_info: expect.any(Object) };

/** What an engine may do differently and still conform. */
export interface EngineSuiteOptions {
  /**
   * Whether PreviewImage streams its image as a preview event. The real
   * engine server sends none (its previews come from samplers); the temp
   * file is there either way.
   */
  previewImageStreams?: boolean;
}

/** A combo input's values: a list as the type (V1 nodes), or `['COMBO', { options }]` (V3 nodes of the real server). */
const comboValues = (spec: unknown) => {
  const [type, options] = spec as [unknown, { options?: unknown } | undefined];
  return type === 'COMBO' ? options?.options : type;
};

export function engineSuite(name: string, make: () => Promise<EngineFixture>, options: EngineSuiteOptions = {}): void {
  const { previewImageStreams = true } = options;
  describe(`Engine conformance: ${name}`, () => {
    let engine: Engine;
    let cleanup: () => Promise<void>;
    let initial: EngineReadiness;
    beforeEach(async () => {
      ({ engine, cleanup } = await make());
      initial = engine.readiness();
      await waitUntilReady(engine);
    });
    afterEach(() => cleanup());

    it('is ready, or starting and then ready', () => {
      expect(['ready', 'starting']).toContain(initial.state);
      expect(engine.readiness()).toEqual({ state: 'ready' });
    });

    it('lists the core node classes in the object_info format', async () => {
      const defs = await engine.nodeDefinitions();
      for (const [cls, [inputs, output, outputNode]] of Object.entries(CORE_NODES)) {
        const d = defs[cls];
        expect(d, cls).toMatchObject({ name: cls, category: expect.any(String), output, output_node: outputNode });
        // Hidden/optional inputs differ between versions; the required ones are the contract.
        expect(Object.keys(d.input.required), cls).toEqual(inputs);
        expect(d.input_order.required, cls).toEqual(inputs);
        expect(d.output_name, cls).toHaveLength(output.length);
        expect(d.output_is_list, cls).toEqual(output.map(() => false));
      }
      expect(defs.EmptyImage.input.required.width).toEqual(['INT', expect.objectContaining({ min: 1 })]);
      expect(comboValues(defs.ImageScale.input.required.crop)).toEqual(['disabled', 'center']);
      expect(comboValues(defs.ImageScale.input.required.upscale_method)).toEqual(expect.arrayContaining(['nearest-exact', 'bilinear', 'bicubic']));
      expect(comboValues(defs.ImageBlend.input.required.blend_mode)).toEqual(expect.arrayContaining(['normal', 'multiply', 'screen']));
    });

    describe('validate', () => {
      it('accepts a good workflow and names its outputs', async () => {
        expect(await engine.validate(scaleChain())).toMatchObject({ ok: true, outputs: ['3'] });
      });

      it('rejects an unknown class with missing_node_type', async () => {
        const w = scaleChain();
        w['2'].class_type = 'NoSuchNode';
        const r = await engine.validate(w);
        expect(r).toMatchObject({ ok: false, error: { ...isIssue, type: 'missing_node_type' }, node_errors: {} });
      });

      it('rejects a workflow with no output node with prompt_no_outputs', async () => {
        const w = scaleChain();
        delete w['3'];
        expect(await engine.validate(w)).toMatchObject({ ok: false, error: { ...isIssue, type: 'prompt_no_outputs' }, node_errors: {} });
      });

      it.each(BROKEN)('rejects %s', async (_, breakIt, nodeId, type, inputName) => {
        const w = scaleChain();
        breakIt(w);
        const r = await engine.validate(w);
        expect(r).toMatchObject({ ok: false, error: { ...isIssue, type: 'prompt_outputs_failed_validation' } });
        if (r.ok) return;
        const node = r.node_errors[nodeId];
        expect(node).toMatchObject({ class_type: w[nodeId].class_type, dependent_outputs: ['3'] });
        for (const issue of node.errors) expect(issue).toMatchObject(isIssue);
        const issue = node.errors.find((e) => e.type === type);
        expect(issue, JSON.stringify(node.errors)).toBeDefined();
        if (inputName) expect(issue!.extra_info.input_name).toBe(inputName);
      });
    });

    describe('execute', () => {
      it('runs EmptyImage -> ImageInvert -> SaveImage and commits one inverted PNG', async () => {
        const color = uniqueColor();
        const fake = createFakeExecutionContext();
        await engine.execute(job(invertChain(color, 4, 2)), fake.ctx);

        expect(fake.types()[0]).toBe('execution_start');
        expect(fake.of('executing').map((e) => [e.node_id, e.class_type])).toEqual([
          ['1', 'EmptyImage'],
          ['2', 'ImageInvert'],
          ['3', 'SaveImage'],
        ]);
        // Only nodes with a ui dict report `executed`; SaveImage's lists its file.
        const executed = fake.of('executed');
        expect(executed.map((e) => e.node_id)).toEqual(['3']);
        expect(executed[0].output.images).toEqual([{ filename: expect.any(String), subfolder: expect.any(String), type: 'output' }]);

        expect(fake.outputs).toHaveLength(1);
        const out = fake.outputs[0];
        expect(out).toMatchObject({ node_id: '3', type: 'image', content_type: 'image/png', size_bytes: out.bytes.byteLength });
        expect(out.name).toMatch(/\.png$/);
        expectAllNear(
          pixelsOf(out.bytes, 4, 2),
          rgbOf(color).map((v) => 255 - v),
        );
      });

      it('commits one output per image of a batch', async () => {
        const fake = createFakeExecutionContext();
        await engine.execute(job(invertChain(uniqueColor(), 2, 2, 3)), fake.ctx);
        expect(fake.outputs.map((o) => o.node_id)).toEqual(['3', '3', '3']);
        expect(new Set(fake.outputs.map((o) => o.name)).size).toBe(3);
        expect(fake.of('executed')[0].output.images).toHaveLength(3);
      });

      it('feeds primitives and StringConcatenate through links', async () => {
        const fake = createFakeExecutionContext();
        const w: Workflow = {
          '1': { class_type: 'PrimitiveInt', inputs: { value: 3 } },
          '2': { class_type: 'PrimitiveString', inputs: { value: 'suite' } },
          '3': { class_type: 'StringConcatenate', inputs: { string_a: ['2', 0], string_b: 'linked', delimiter: '-' } },
          '4': { class_type: 'EmptyImage', inputs: { width: ['1', 0], height: 1, batch_size: 1, color: uniqueColor() } },
          '5': { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: ['3', 0] } },
        };
        await engine.execute(job(w), fake.ctx);
        expect(fake.outputs).toHaveLength(1);
        expect(fake.outputs[0].name.startsWith('suite-linked')).toBe(true);
        pixelsOf(fake.outputs[0].bytes, 3, 1);
      });

      it('runs nodes whose ids are Object.prototype names, an asset input included', async () => {
        const name = `suite-${crypto.randomUUID()}.png`;
        const bytes = encodePng({ width: 1, height: 1, channels: 3, data: new Uint8Array([10, 20, 30]) });
        const fake = createFakeExecutionContext({ assets: [{ id: crypto.randomUUID(), name, content_type: 'image/png', bytes }] });
        // JSON text: an object literal cannot hold an own `__proto__` key.
        const w = JSON.parse(
          `{"__proto__":{"class_type":"LoadImage","inputs":{"image":${JSON.stringify(name)}}},` +
            '"constructor":{"class_type":"ImageInvert","inputs":{"image":["__proto__",0]}},' +
            '"toString":{"class_type":"SaveImage","inputs":{"images":["constructor",0],"filename_prefix":"suite"}}}',
        ) as Workflow;
        expect(await engine.validate(w)).toMatchObject({ ok: true, outputs: ['toString'] });
        await engine.execute(job(w), fake.ctx);
        expect(fake.outputs.map((o) => o.node_id)).toEqual(['toString']);
        expect(pixelsOf(fake.outputs[0].bytes, 1, 1)).toEqual([[245, 235, 225]]);
      });

      it('scales, crops and blends', async () => {
        const [a, b] = [uniqueColor(), uniqueColor()];
        const w: Workflow = {
          '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 4, batch_size: 1, color: a } },
          '2': { class_type: 'ImageScale', inputs: { image: ['1', 0], upscale_method: 'nearest-exact', width: 4, height: 2, crop: 'disabled' } },
          '3': { class_type: 'ImageCrop', inputs: { image: ['2', 0], width: 2, height: 2, x: 1, y: 0 } },
          '4': { class_type: 'EmptyImage', inputs: { width: 2, height: 2, batch_size: 1, color: b } },
          '5': { class_type: 'ImageBlend', inputs: { image1: ['3', 0], image2: ['4', 0], blend_factor: 1, blend_mode: 'multiply' } },
          '6': { class_type: 'SaveImage', inputs: { images: ['5', 0], filename_prefix: 'suite' } },
        };
        const fake = createFakeExecutionContext();
        await engine.execute(job(w), fake.ctx);
        const [ra, rb] = [rgbOf(a), rgbOf(b)];
        expectAllNear(
          pixelsOf(fake.outputs[0].bytes, 2, 2),
          ra.map((v, c) => Math.round((v * rb[c]) / 255)),
        );
      });

      it('PreviewImage commits no output, only a temporary file (and streams a preview where the engine does)', async () => {
        const w: Workflow = {
          '1': { class_type: 'EmptyImage', inputs: { width: 3, height: 2, batch_size: 1, color: uniqueColor() } },
          '2': { class_type: 'PreviewImage', inputs: { images: ['1', 0] } },
        };
        const fake = createFakeExecutionContext();
        await engine.execute(job(w), fake.ctx);
        expect(fake.outputs.filter((o) => !o.temporary)).toEqual([]);
        const previews = fake.of('preview');
        expect(previews.map((p) => p.node_id)).toEqual(previewImageStreams ? ['2'] : []);
        if (previews[0]?.format === 'png') pixelsOf(previews[0].bytes, 3, 2);
        const [shown] = fake.of('executed').map((e) => e.output.images as Array<{ filename: string; type: string }>);
        expect(shown).toEqual([expect.objectContaining({ type: 'temp' })]);
        expect(fake.outputs.map((o) => [o.name, o.temporary])).toEqual([[shown[0].filename, true]]);
      });

      it('LoadImage reads an input asset of the job by name', async () => {
        const name = `suite-${crypto.randomUUID()}.png`;
        const bytes = encodePng({ width: 2, height: 1, channels: 3, data: new Uint8Array([255, 0, 0, 0, 0, 255]) });
        const fake = createFakeExecutionContext({ assets: [{ id: crypto.randomUUID(), name, content_type: 'image/png', bytes }] });
        const w: Workflow = {
          '1': { class_type: 'LoadImage', inputs: { image: name } },
          '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
          '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'suite' } },
        };
        await engine.execute(job(w), fake.ctx);
        expect(pixelsOf(fake.outputs[0].bytes, 2, 1)).toEqual([
          [0, 255, 255],
          [255, 255, 0],
        ]);
      });

      it('reports the nodes of a repeated workflow as cached', async () => {
        const w = invertChain(uniqueColor());
        const first = createFakeExecutionContext();
        await engine.execute(job(w), first.ctx);
        expect(first.of('cached').flatMap((e) => e.node_ids)).not.toContain('1');
        const second = createFakeExecutionContext();
        await engine.execute(job(w), second.ctx);
        expect(second.of('cached').flatMap((e) => e.node_ids)).toEqual(expect.arrayContaining(['1', '2']));
        expect(second.of('executing').map((e) => e.node_id)).not.toContain('1');
        // The reference sends `executed` for cached output nodes too.
        expect(second.of('executed').map((e) => e.node_id)).toEqual(['3']);
      });

      it('stops when canceled and rejects with the abort', async () => {
        const fake = createFakeExecutionContext({ abortWhen: (e) => e.type === 'executing' });
        const err = await rejectionOf(engine.execute(job(invertChain(uniqueColor())), fake.ctx));
        expect(err).not.toBeInstanceOf(ExecutionError);
        expect((err as Error | undefined)?.name === 'AbortError' || err === fake.controller.signal.reason).toBe(true);
        expect(fake.outputs).toEqual([]);
        expect(fake.of('executed')).toEqual([]);
      });

      it('rejects a node failure with an ExecutionError naming the node', async () => {
        const w: Workflow = {
          '1': { class_type: 'LoadImage', inputs: { image: `missing-${crypto.randomUUID()}.png` } },
          '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'suite' } },
        };
        const fake = createFakeExecutionContext();
        const err = await rejectionOf(engine.execute(job(w), fake.ctx));
        expect(err).toBeInstanceOf(ExecutionError);
        expect(err).toMatchObject({ node_id: '1', class_type: 'LoadImage', exception_type: expect.stringMatching(/\w/) });
        expect(fake.outputs).toEqual([]);
        expect(fake.of('executed')).toEqual([]);
      });

      it('rejects an invalid workflow with an ExecutionError before anything runs', async () => {
        const w = invertChain(uniqueColor());
        w['1'].inputs.width = 0;
        const fake = createFakeExecutionContext();
        expect(await rejectionOf(engine.execute(job(w), fake.ctx))).toBeInstanceOf(ExecutionError);
        expect(fake.of('executing')).toEqual([]);
        expect(fake.outputs).toEqual([]);
      });
    });
  });
}
