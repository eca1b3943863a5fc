// The mask editor's save, as the reference's /upload/mask does it: the
// original converted to RGBA, its alpha channel replaced by the uploaded
// mask's (a mask without alpha counts as fully opaque, as Pillow's
// convert('RGBA') makes it), saved as PNG at compression level 4 with the
// original's text chunks (prompt, workflow, ...) kept. Where the reference
// fails on a mask of another size, the mask is scaled to the original's size
// (nearest neighbour). Images go through the local engine's PNG codec (PNG
// only; 16384 px per edge, 64 megapixels).
import { decodePng, encodePng, PngError } from '../../lib/png/index.ts';
import { imageSizeProblem, pngSize } from './sniff.ts';

/** Which of the two images could not be read, and why. */
export class MaskInputError extends Error {
  override name = 'MaskInputError';
  constructor(
    readonly which: 'mask' | 'original',
    message: string,
  ) {
    super(message);
  }
}

function decode(bytes: Uint8Array, which: 'mask' | 'original') {
  try {
    return decodePng(bytes);
  } catch (err) {
    if (err instanceof PngError || err instanceof RangeError) throw new MaskInputError(which, err.message);
    throw err;
  }
}

const byte = (v: number) => (v > 0 ? (v < 1 ? Math.round(v * 255) : 255) : 0);

/** The mask's alpha as bytes, scaled to `width` x `height` when its size differs. */
function maskAlpha(maskPng: Uint8Array, width: number, height: number): Uint8Array {
  const mask = decode(maskPng, 'mask');
  const alpha = new Uint8Array(width * height);
  if (mask.channels !== 4) return alpha.fill(255);
  for (let y = 0; y < height; y++) {
    const my = Math.min(mask.height - 1, Math.floor((y * mask.height) / height));
    for (let x = 0; x < width; x++) {
      const mx = Math.min(mask.width - 1, Math.floor((x * mask.width) / width));
      alpha[y * width + x] = byte(mask.data[(my * mask.width + mx) * 4 + 3]);
    }
  }
  return alpha;
}

/** The original PNG with the mask PNG's alpha; throws MaskInputError when either cannot be decoded. */
export function applyMaskAlpha(originalPng: Uint8Array, maskPng: Uint8Array): Uint8Array {
  const size = pngSize(originalPng);
  if (!size) throw new MaskInputError('original', 'not a PNG image (only PNG originals can be masked)');
  const problem = imageSizeProblem(size);
  if (problem) throw new MaskInputError('original', problem);
  // The mask first: only one image's floats are alive at a time.
  const alpha = maskAlpha(maskPng, size.width, size.height);
  const original = decode(originalPng, 'original');
  const { width, height, channels, data } = original;
  const out = new Uint8Array(width * height * 4);
  for (let i = 0, o = 0, s = 0; i < width * height; i++, o += 4, s += channels) {
    out[o] = byte(data[s]);
    out[o + 1] = byte(data[s + 1]);
    out[o + 2] = byte(data[s + 2]);
    out[o + 3] = alpha[i];
  }
  return encodePng({ width, height, channels: 4, data: out }, { text: original.text, level: 4 });
}
