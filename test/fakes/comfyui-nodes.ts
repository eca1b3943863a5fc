// Node classes only the fake worker has, so a worker engine can be tested on
// what the built-in nodes do not produce: progress text (binary type 3
// frames) and output files of other kinds, with the real server's ui shapes
// (SaveAudio: `audio`; SaveVideo / SaveWEBM: `images` + `animated`; a plain
// file under `files`). They are described as the real server describes its
// V3 classes (comfyui-object-info.ts), with COMBO inputs as those have.
import { defineNode, type LocalNode } from '../../engine/local/define-node.ts';
import { fakeLoaders, fakeSampler } from './comfyui-media-nodes.ts';
import { v3Node } from './comfyui-object-info.ts';

const ref = (filename: string) => ({ filename, subfolder: '', type: 'output' });

export const fakeProgressText = v3Node(
  defineNode({
    name: 'FakeProgressText',
    category: 'fake',
    description: 'Sends each line of `text` as a progress text frame, then shows it.',
    required: { text: ['STRING', { multiline: true, default: 'loading\ndone' }] },
    output_node: true,
    run({ text }, ctx) {
      const lines = String(text).split('\n');
      lines.forEach((line, i) => {
        ctx.text(line);
        ctx.progress(i + 1, lines.length);
      });
      return { outputs: [], ui: { text: [String(text)] } };
    },
  }),
);

/** A file of `size` bytes of a given kind, committed as an output with the real server's ui for that kind. */
export const fakeSaveFile = v3Node(
  defineNode({
    name: 'FakeSaveFile',
    category: 'fake',
    description: 'Writes `size` bytes as an output file of the given kind (audio, video, file).',
    required: {
      // A V3 combo: its value is not checked at validation (any other kind writes a plain file).
      kind: ['COMBO', { multiselect: false, options: ['audio', 'video', 'file'], default: 'audio' }],
      size: ['INT', { default: 1024, min: 0, max: 64 * 1024 * 1024 }],
      filename_prefix: ['STRING', { default: 'ComfyUI' }],
    },
    output_node: true,
    async run({ kind, size, filename_prefix }, ctx) {
      const bytes = new Uint8Array(size as number);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 0xff;
      const prefix = String(filename_prefix).replace(/[\\/]+/g, '_') || 'ComfyUI';
      const [ext, content_type, type] =
        kind === 'audio'
          ? (['flac', 'audio/flac', 'audio'] as const)
          : kind === 'video'
            ? (['mp4', 'video/mp4', 'video'] as const)
            : (['bin', 'application/octet-stream', 'file'] as const);
      const name = `${prefix}_00001_.${ext}`;
      await ctx.commitOutput({ name, type, content_type, body: bytes });
      if (kind === 'audio') return { outputs: [], ui: { audio: [ref(name)] } };
      if (kind === 'video') return { outputs: [], ui: { images: [ref(name)], animated: [true] } };
      return { outputs: [], ui: { files: [ref(name)] } };
    },
  }),
);

export const fakeNodes: LocalNode[] = [fakeProgressText, fakeSaveFile, fakeSampler, ...fakeLoaders];
