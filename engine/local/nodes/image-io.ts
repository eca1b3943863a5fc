// Image nodes that touch the outside: SaveImage commits PNG outputs,
// PreviewImage streams PNG previews (never committed), LoadImage reads an
// input asset of the job's account by id or by file name.
import { readCapped } from '../../../lib/bytes.ts';
import { dict } from '../../../lib/dict.ts';
import { imageBatchToPng } from '../../../lib/image/png-batch.ts';
import { stringifyJson } from '../../../lib/json.ts';
import { isUuid } from '../../../lib/uuid.ts';
import { defineNode, type LocalNode, type NodeRunContext } from '../define-node.ts';
import { decodeImageFile } from './image-load.ts';
import { requireImage } from './image-ops.ts';

const counter = (n: number) => String(n).padStart(5, '0');

/**
 * The reference embeds the prompt and extra_pnginfo (the editor's workflow) as
 * PNG text. They are hidden inputs there; here they are used when the
 * executor passes them, unless the operator set `disableMetadata`.
 */
function metadata(inputs: Record<string, unknown>, ctx: NodeRunContext): Record<string, string> {
  const text = dict<string>();
  if (ctx.settings.disableMetadata === true) return text;
  if (inputs.prompt !== undefined) text.prompt = stringifyJson(inputs.prompt);
  const extra = inputs.extra_pnginfo;
  if (extra && typeof extra === 'object') {
    for (const [key, value] of Object.entries(extra)) text[key] = stringifyJson(value);
  }
  return text;
}

export const saveImage = defineNode({
  name: 'SaveImage',
  category: 'image',
  description: 'Saves the input images as PNG outputs of the job.',
  required: {
    images: ['IMAGE', { tooltip: 'The images to save.' }],
    filename_prefix: ['STRING', { default: 'ComfyUI', tooltip: 'The prefix for the file to save.' }],
  },
  output_node: true,
  async run(inputs, ctx) {
    const images = requireImage(inputs.images, 'images');
    // Outputs are flat assets, so a "folder/name" prefix of the reference becomes "folder_name".
    const prefix = String(inputs.filename_prefix ?? '').replace(/[\\/]+/g, '_') || 'ComfyUI';
    const text = metadata(inputs, ctx);
    const results = [];
    // The counter restarts per run: assets are told apart by id, not by a scan of a folder.
    for (let i = 0; i < images.count; i++) {
      ctx.signal.throwIfAborted();
      const filename = `${prefix}_${counter(i + 1)}_.png`;
      const body = imageBatchToPng(images, i, { text });
      await ctx.commitOutput({ name: filename, type: 'image', content_type: 'image/png', body });
      results.push({ filename, subfolder: '', type: 'output' });
    }
    return { outputs: [], ui: { images: results } };
  },
});

export const previewImage = defineNode({
  name: 'PreviewImage',
  category: 'image',
  description: 'Shows the input images as previews; nothing is saved.',
  required: { images: ['IMAGE'] },
  output_node: true,
  async run(inputs, ctx) {
    const images = requireImage(inputs.images, 'images');
    const suffix = Array.from(crypto.getRandomValues(new Uint8Array(5)), (b) => String.fromCharCode(97 + (b % 26))).join('');
    const results = [];
    for (let i = 0; i < images.count; i++) {
      ctx.signal.throwIfAborted();
      // Level 1 like the reference's temp files: previews favour speed over size.
      const png = imageBatchToPng(images, i, { level: 1 });
      ctx.preview(png, 'png');
      const filename = `ComfyUI_temp_${suffix}_${counter(i + 1)}_.png`;
      // Kept for a while as a temp file, so a client can fetch what the ui lists (/api/view?type=temp).
      await ctx.commitOutput({ name: filename, type: 'image', content_type: 'image/png', body: png, temporary: true });
      results.push({ filename, subfolder: '', type: 'temp' });
    }
    return { outputs: [], ui: { images: results } };
  },
});

async function findAsset(ctx: NodeRunContext, ref: string) {
  if (isUuid(ref)) return (await ctx.readAsset({ id: ref.toLowerCase() })) ?? ctx.readAsset({ name: ref });
  return ctx.readAsset({ name: ref });
}

export const loadImage = defineNode({
  name: 'LoadImage',
  category: 'image',
  // Any asset id or file name of the caller's inputs, rather than the reference's list of files.
  required: { image: ['STRING', { image_upload: true }] },
  outputs: [{ type: 'IMAGE' }, { type: 'MASK' }],
  // A name can come to mean a newer upload, so a cached result could be stale.
  cacheable: false,
  async run(inputs, ctx) {
    // Values such as "name.png [input]" (the reference's annotated form) name the same file.
    const ref = String(inputs.image ?? '')
      .replace(/\s*\[(input|output|temp)\]$/, '')
      .trim();
    const asset = ref ? await findAsset(ctx, ref) : null;
    if (!asset) {
      throw Object.assign(new Error(`LoadImage: no input image with the id or name "${ref}"`), { exception_type: 'FileNotFoundError' });
    }
    const { image, mask } = decodeImageFile(await readCapped(asset.body), ctx.maxBytes, `Node ${ctx.node_id} (LoadImage)`);
    return { outputs: [image, mask] };
  },
});

export const imageIoNodes: LocalNode[] = [saveImage, previewImage, loadImage];
