// Image nodes that only compute: EmptyImage, ImageInvert, ImageCrop,
// ImageScale, ImageBlend, with the reference's names, inputs and defaults,
// and what each allocates (image-memory.ts).

import { createImageBatch } from '../../../lib/image/batch.ts';
import { defineNode, type LocalNode } from '../define-node.ts';
import { emptyImageMemory, imageBlendMemory, imageCropMemory, imageScaleMemory, sameSizeMemory } from './image-memory.ts';
import { BLEND_MODES, type BlendMode, blendImages, cropImage, pyRound, requireImage, requireInt } from './image-ops.ts';
import { scaleImage, UPSCALE_METHODS, type UpscaleMethod } from './resample.ts';

const MAX_RESOLUTION = 16384;
const size = (def: number, min: number) => ['INT', { default: def, min, max: MAX_RESOLUTION, step: 1 }] as ['INT', Record<string, unknown>];

export const emptyImage = defineNode({
  name: 'EmptyImage',
  category: 'image',
  required: {
    width: size(512, 1),
    height: size(512, 1),
    batch_size: ['INT', { default: 1, min: 1, max: 4096 }],
    color: ['INT', { default: 0, min: 0, max: 0xffffff, step: 1, display: 'color' }],
  },
  outputs: [{ type: 'IMAGE' }],
  memory: emptyImageMemory,
  run(inputs) {
    const color = requireInt(inputs.color, 'color');
    const out = createImageBatch(requireInt(inputs.width, 'width'), requireInt(inputs.height, 'height'), requireInt(inputs.batch_size, 'batch_size'));
    const rgb = [(color >> 16) & 0xff, (color >> 8) & 0xff, color & 0xff].map((v) => v / 0xff);
    for (let i = 0; i < out.data.length; i++) out.data[i] = rgb[i % 3];
    return { outputs: [out] };
  },
});

export const imageInvert = defineNode({
  name: 'ImageInvert',
  category: 'image',
  required: { image: ['IMAGE'] },
  outputs: [{ type: 'IMAGE' }],
  memory: sameSizeMemory,
  run(inputs) {
    const image = requireImage(inputs.image, 'image');
    return { outputs: [{ ...image, data: image.data.map((v) => 1 - v) }] };
  },
});

export const imageCrop = defineNode({
  name: 'ImageCrop',
  category: 'image/transform',
  required: { image: ['IMAGE'], width: size(512, 1), height: size(512, 1), x: size(0, 0), y: size(0, 0) },
  outputs: [{ type: 'IMAGE' }],
  memory: imageCropMemory,
  run(inputs) {
    const [w, h, x, y] = ['width', 'height', 'x', 'y'].map((k) => requireInt(inputs[k], k));
    return { outputs: [cropImage(requireImage(inputs.image, 'image'), x, y, w, h)] };
  },
});

export const imageScale = defineNode({
  name: 'ImageScale',
  category: 'image/upscaling',
  required: {
    image: ['IMAGE'],
    upscale_method: [UPSCALE_METHODS],
    width: size(512, 0),
    height: size(512, 0),
    crop: [['disabled', 'center']],
  },
  outputs: [{ type: 'IMAGE' }],
  memory: imageScaleMemory,
  run(inputs) {
    const image = requireImage(inputs.image, 'image');
    let width = requireInt(inputs.width, 'width');
    let height = requireInt(inputs.height, 'height');
    if (width === 0 && height === 0) return { outputs: [image] };
    // 0 on one side keeps the aspect ratio, rounded as the reference rounds.
    if (width === 0) width = Math.max(1, pyRound((image.width * height) / image.height));
    else if (height === 0) height = Math.max(1, pyRound((image.height * width) / image.width));
    const method = inputs.upscale_method as UpscaleMethod;
    if (!UPSCALE_METHODS.includes(method)) throw new TypeError(`unknown upscale_method ${String(method)}`);
    return { outputs: [scaleImage(image, width, height, method, inputs.crop === 'center' ? 'center' : 'disabled')] };
  },
});

export const imageBlend = defineNode({
  name: 'ImageBlend',
  category: 'image/postprocessing',
  required: {
    image1: ['IMAGE'],
    image2: ['IMAGE'],
    blend_factor: ['FLOAT', { default: 0.5, min: 0, max: 1, step: 0.01 }],
    blend_mode: [BLEND_MODES],
  },
  outputs: [{ type: 'IMAGE' }],
  memory: imageBlendMemory,
  run(inputs) {
    const image1 = requireImage(inputs.image1, 'image1');
    let image2 = requireImage(inputs.image2, 'image2');
    if (image2.width !== image1.width || image2.height !== image1.height) {
      // The reference resizes image2 with bicubic and a centre crop.
      image2 = scaleImage(image2, image1.width, image1.height, 'bicubic', 'center');
    }
    const mode = inputs.blend_mode as BlendMode;
    if (!BLEND_MODES.includes(mode)) throw new TypeError(`unknown blend_mode ${String(mode)}`);
    return { outputs: [blendImages(image1, image2, Number(inputs.blend_factor), mode)] };
  },
});

export const imageBasicNodes: LocalNode[] = [emptyImage, imageInvert, imageCrop, imageScale, imageBlend];
