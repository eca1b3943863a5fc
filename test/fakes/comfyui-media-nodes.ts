// Node classes of the fake worker standing for the real server's model
// nodes, with their definitions' features: a sampler, the only source of
// binary previews on the real server (one per step, with the step's
// progress), whose seed goes up to 2^64 - 1; and loaders whose COMBO input
// carries an upload flag (audio_upload, video_upload, file_upload), so the
// worker engine stages job assets into them.
import { defineNode, type LocalNode } from '../../engine/local/define-node.ts';
import { isImageBatch } from '../../lib/image/batch.ts';
import { imageBatchToPng } from '../../lib/image/png-batch.ts';
import { U64_MAX, v3Node } from './comfyui-object-info.ts';

export const fakeSampler = v3Node(
  defineNode({
    name: 'FakeSampler',
    category: 'sampling',
    description: 'Returns `image`, after `steps` progress steps each with a preview of it.',
    required: {
      image: ['IMAGE', {}],
      seed: ['INT', { default: 0, min: 0, max: U64_MAX, control_after_generate: true }],
      steps: ['INT', { default: 3, min: 1, max: 100 }],
      sampler_name: ['COMBO', { multiselect: false, options: ['euler', 'dpmpp_2m'], default: 'euler' }],
    },
    outputs: [{ type: 'IMAGE' }],
    run({ image, steps }, ctx) {
      if (!isImageBatch(image)) throw new TypeError('image is not an IMAGE');
      const png = imageBatchToPng(image, 0, { level: 1 });
      for (let i = 1; i <= (steps as number); i++) {
        ctx.preview(png, 'png');
        ctx.progress(i, steps as number);
      }
      return { outputs: [image] };
    },
  }),
  { output_tooltips: ['The sampled image.'] },
);

/** A loader of one kind of upload: its output is the named input file's size in bytes. */
const loader = (name: string, flag: string): LocalNode =>
  v3Node(
    defineNode({
      name,
      category: 'loaders',
      required: { file: ['COMBO', { multiselect: false, options: [], [flag]: true }] },
      outputs: [{ type: 'INT', name: 'size' }],
      async run({ file }, ctx) {
        const found = await ctx.readAsset({ name: String(file) });
        if (!found) throw Object.assign(new Error(`[Errno 2] No such file or directory: '${String(file)}'`), { exception_type: 'FileNotFoundError' });
        await found.body.cancel();
        return { outputs: [found.size_bytes] };
      },
    }),
  );

export const fakeLoaders: LocalNode[] = [
  loader('FakeLoadAudio', 'audio_upload'),
  loader('FakeLoadVideo', 'video_upload'),
  loader('FakeLoad3D', 'file_upload'),
];
