// Turning fetched or stored bytes into IMAGE + MASK, shared by LoadImage and
// LoadImageFromURL: format sniffing (the local engine decodes PNG only; a
// JPEG gets a clear error rather than garbage), and the job's memory budget:
// the PNG's header says what decoding it will take, and an image that does
// not fit in what is left is refused before anything is inflated.
import type { ImageBatch } from '../../../lib/image/batch.ts';
import { pngToImageBatch } from '../../../lib/image/png-batch.ts';
import { hasPngSignature, PngError, PngMemoryError } from '../../../lib/png/index.ts';
import { createMaskBatch, type MaskBatch } from '../mask.ts';
import { formatBytes, OOMError } from '../memory-budget.ts';

/**
 * Decodes an image file into IMAGE and MASK the way the reference's LoadImage
 * does, holding at most `maxBytes` besides the file; otherwise an OOMError
 * whose message starts with `node` ("Node 4 (LoadImage)").
 */
export function decodeImageFile(bytes: Uint8Array, maxBytes = Infinity, node = 'The node'): { image: ImageBatch; mask: MaskBatch } {
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    throw new PngError('this is a JPEG image; the local engine only supports PNG images');
  }
  if (!hasPngSignature(bytes)) throw new PngError('unrecognised image format; the local engine only supports PNG images');
  let decoded;
  try {
    decoded = pngToImageBatch(bytes, { maxBytes });
  } catch (err) {
    if (!(err instanceof PngMemoryError)) throw err;
    throw new OOMError(
      `${node}: the image is ${err.width}x${err.height} and decoding it needs ${formatBytes(err.bytes)}; ` +
        `${formatBytes(err.maxBytes)} of the job's memory budget is left`,
      { cause: err },
    );
  }
  const { image, mask } = decoded;
  if (mask) return { image, mask: { width: image.width, height: image.height, count: 1, data: mask } };
  // Without alpha the reference emits a 64x64 zero mask, not one of the image's size.
  return { image, mask: createMaskBatch(64, 64, 1) };
}
