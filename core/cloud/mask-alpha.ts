// The mask editor's save, as the reference's /upload/mask does it: the
// original converted to RGBA, its alpha channel replaced by the uploaded
// mask's (a mask without alpha counts as fully opaque, as Pillow's
// convert('RGBA') makes it), saved as PNG at compression level 4 with the
// original's text chunks (prompt, workflow, ...) kept. Where the reference
// fails on a mask of another size, the mask is scaled to the original's size
// (nearest neighbour). Images go through the local engine's PNG codec (PNG
// only; 16384 px per edge, 64 megapixels) as 8-bit RGBA, the original's
// bytes taking the alpha in place, within a memory bound (the service's
// maxJobMemoryBytes): each decode is refused from its header, before
// anything is inflated, when it would not fit beside the buffers alive with
// it. A 16-bit PNG of the largest size is a few hundred kilobytes and
// decodes to gigabytes.
import { decodeBytes, decodePngRgba8, encodePng, PngError, PngMemoryError, readPngHeader } from '../../lib/png/index.ts';
import { imageSizeProblem, pngSize } from './sniff.ts';

/** An image the bound does not allow: its size, what masking would need (at least) and the bound. */
export interface TooLarge {
  width: number;
  height: number;
  bytes: number;
  maxBytes: number;
}

/** Which of the two images could not be read, and why; `tooLarge` when it cannot be decoded within the bound. */
export class MaskInputError extends Error {
  override name = 'MaskInputError';
  constructor(
    readonly which: 'mask' | 'original',
    message: string,
    readonly tooLarge?: TooLarge,
  ) {
    super(message);
  }
}

/** Runs a step of reading an image, turning codec failures into MaskInputError. */
function reading<T>(which: 'mask' | 'original', besides: number, maxBytes: number, step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (err instanceof PngMemoryError) {
      const tooLarge = { width: err.width, height: err.height, bytes: err.bytes + besides, maxBytes };
      throw new MaskInputError(which, tooLargeMessage(tooLarge), tooLarge);
    }
    if (err instanceof PngError || err instanceof RangeError) throw new MaskInputError(which, err.message);
    throw err;
  }
}

/** Decodes within `maxBytes` in all, `besides` of them taken by buffers alive beside the decode's. */
const decode = (bytes: Uint8Array, which: 'mask' | 'original', maxBytes: number, besides: number) =>
  reading(which, besides, maxBytes, () => decodePngRgba8(bytes, { maxBytes: maxBytes - besides }));

const tooLargeMessage = (t: TooLarge) =>
  `the image is ${t.width}x${t.height} and masking it needs ${t.bytes} bytes of memory, more than the ${t.maxBytes} allowed`;

/** The mask's alpha as bytes, scaled to `width` x `height` when its size differs. */
function maskAlpha(maskPng: Uint8Array, width: number, height: number, maxBytes: number): Uint8Array {
  // The alpha bytes come to life beside the mask's pixels.
  const mask = decode(maskPng, 'mask', maxBytes, width * height);
  const alpha = new Uint8Array(width * height);
  // Without alpha it decodes opaque (255), as Pillow's convert('RGBA') makes it.
  for (let y = 0; y < height; y++) {
    const my = Math.min(mask.height - 1, Math.floor((y * mask.height) / height));
    for (let x = 0; x < width; x++) {
      const mx = Math.min(mask.width - 1, Math.floor((x * mask.width) / width));
      alpha[y * width + x] = mask.data[(my * mask.width + mx) * 4 + 3];
    }
  }
  return alpha;
}

/**
 * The original PNG with the mask PNG's alpha; throws MaskInputError when
 * either cannot be decoded, or cannot be within `maxBytes`.
 */
export function applyMaskAlpha(originalPng: Uint8Array, maskPng: Uint8Array, maxBytes = Infinity): Uint8Array {
  const size = pngSize(originalPng);
  if (!size) throw new MaskInputError('original', 'not a PNG image (only PNG originals can be masked)');
  const problem = imageSizeProblem(size);
  if (problem) throw new MaskInputError('original', problem);
  const pixels = size.width * size.height;
  // Alive beside the original's RGBA bytes: the alpha bytes and the encoder's filtered rows (the compressed result aside).
  const besides = pixels + (4 * pixels + size.height);
  // From the original's header, before anything is allocated; its decode checks again.
  const header = reading('original', besides, maxBytes, () => readPngHeader(originalPng));
  const bytes = decodeBytes(header, 4, 1) + besides;
  if (bytes > maxBytes) {
    const tooLarge = { ...size, bytes, maxBytes };
    throw new MaskInputError('original', tooLargeMessage(tooLarge), tooLarge);
  }
  // The mask first: only one image's pixels are alive at a time.
  const alpha = maskAlpha(maskPng, size.width, size.height, maxBytes);
  const original = decode(originalPng, 'original', maxBytes, besides);
  const { width, height, data } = original;
  for (let i = 0; i < width * height; i++) data[i * 4 + 3] = alpha[i];
  return encodePng({ width, height, channels: 4, data }, { text: original.text, level: 4 });
}
