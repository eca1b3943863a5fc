// What the image nodes allocate (NodeSpec.memory): an IMAGE holds 3 Float32
// per pixel, so its bytes follow from the sizes in a node's inputs: its
// constants, and an upstream image's shape (known ahead when an estimate
// said it, always at run time, where the image itself has the shape's
// fields). A size not known ahead counts as 1, so the estimate is then a
// lower bound and the shape is not passed on.
import type { MemoryEstimate } from '../define-node.ts';
import { pyRound } from './image-ops.ts';

/** What an IMAGE's size is made of; an ImageBatch is one. */
export interface ImageShape {
  width: number;
  height: number;
  count: number;
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : undefined);

export function shapeOf(v: unknown): ImageShape | undefined {
  const s = v as Partial<ImageShape> | null;
  if (!s || typeof s !== 'object') return undefined;
  const [width, height, n] = [count(s.width), count(s.height), count(s.count)];
  return width !== undefined && height !== undefined && n !== undefined ? { width, height, count: n } : undefined;
}

export const imageBytes = (s: ImageShape): number => Math.max(0, s.width) * Math.max(0, s.height) * Math.max(0, s.count) * 3 * 4;

/** The input to name: the batch when there is one, else the longer side. */
const culprit = (width: number, height: number, batch: number, batchInput = 'batch_size') =>
  batch > 1 ? batchInput : height > width ? 'height' : 'width';

export function emptyImageMemory(inputs: Record<string, unknown>): MemoryEstimate {
  const [w, h, n] = [count(inputs.width), count(inputs.height), count(inputs.batch_size)];
  const shape = { width: Math.max(1, w ?? 1), height: Math.max(1, h ?? 1), count: Math.max(1, n ?? 1) };
  const exact = w !== undefined && h !== undefined && n !== undefined;
  return { bytes: imageBytes(shape), input: culprit(shape.width, shape.height, shape.count), outputs: exact ? [shape] : undefined };
}

/**
 * ImageScale: the target size (a side of 0 follows the image's aspect), the
 * image's batch; while it runs, the centre crop's copy and the row pass's
 * Float64 buffer (source height x target width). Both sides 0 pass the
 * image through.
 */
export function imageScaleMemory(inputs: Record<string, unknown>): MemoryEstimate {
  const image = shapeOf(inputs.image);
  const [w, h] = [count(inputs.width), count(inputs.height)];
  if (w === 0 && h === 0) return { bytes: 0, outputs: image ? [image] : undefined };
  let width = Math.max(1, w ?? 1);
  let height = Math.max(1, h ?? 1);
  if (w === 0) width = image ? Math.max(1, pyRound((image.width * height) / image.height)) : 1;
  else if (h === 0) height = image ? Math.max(1, pyRound((image.height * width) / image.width)) : 1;
  const n = image?.count ?? 1;
  const shape = { width, height, count: n };
  const crop = image && inputs.crop === 'center';
  const source = crop ? centreCrop(image, width, height) : image;
  // The crop is a copy, even when it keeps the whole image.
  const cropCopy = crop ? imageBytes(source!) : 0;
  const scratch = cropCopy + n * (source?.height ?? 1) * width * 3 * 8;
  const exact = image !== undefined && w !== undefined && h !== undefined;
  // The side the workflow sets, when the other follows the aspect.
  const input = w === 0 ? 'height' : h === 0 ? 'width' : culprit(width, height, 1);
  return { bytes: imageBytes(shape), scratch, input, outputs: exact ? [shape] : undefined };
}

/** The part of the image scaleImage keeps for the target's aspect. */
function centreCrop(image: ImageShape, width: number, height: number): ImageShape {
  const [oldAspect, newAspect] = [image.width / image.height, width / height];
  if (oldAspect > newAspect) return { ...image, width: image.width - 2 * pyRound((image.width - image.width * (newAspect / oldAspect)) / 2) };
  if (oldAspect < newAspect) return { ...image, height: image.height - 2 * pyRound((image.height - image.height * (oldAspect / newAspect)) / 2) };
  return image;
}

/** ImageInvert: a new image of the input's size. */
export function sameSizeMemory(inputs: Record<string, unknown>): MemoryEstimate | null {
  const image = shapeOf(inputs.image);
  return image ? { bytes: imageBytes(image), outputs: [image] } : null;
}

/** ImageCrop: the rectangle clipped to the image, as cropImage clips it. */
export function imageCropMemory(inputs: Record<string, unknown>): MemoryEstimate | null {
  const image = shapeOf(inputs.image);
  const [w, h, x, y] = ['width', 'height', 'x', 'y'].map((k) => count(inputs[k]));
  if (!image || w === undefined || h === undefined || x === undefined || y === undefined) return null;
  const x0 = Math.max(0, Math.min(x, image.width - 1));
  const y0 = Math.max(0, Math.min(y, image.height - 1));
  const shape = {
    width: Math.max(0, Math.min(x0 + w, image.width) - x0),
    height: Math.max(0, Math.min(y0 + h, image.height) - y0),
    count: image.count,
  };
  return { bytes: imageBytes(shape), outputs: [shape] };
}

/** ImageBlend: image1's size, and image2 scaled to it while it runs when the sizes differ. */
export function imageBlendMemory(inputs: Record<string, unknown>): MemoryEstimate | null {
  const [image1, image2] = [shapeOf(inputs.image1), shapeOf(inputs.image2)];
  if (!image1) return null;
  const resized = !image2 || image2.width !== image1.width || image2.height !== image1.height;
  const scratch = image2 && resized ? imageBytes({ ...image1, count: image2.count }) : 0;
  return { bytes: imageBytes(image1), scratch, outputs: [image1] };
}
