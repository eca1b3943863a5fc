// Turning fetched or stored bytes into IMAGE + MASK, shared by LoadImage and
// LoadImageFromURL: format sniffing (the local engine decodes PNG only; a
// JPEG gets a clear error rather than garbage).
import type { ImageBatch } from '../../../lib/image/batch.ts';
import { pngToImageBatch } from '../../../lib/image/png-batch.ts';
import { hasPngSignature, PngError } from '../../../lib/png/index.ts';
import { createMaskBatch, type MaskBatch } from '../mask.ts';

/** Decodes an image file into IMAGE and MASK the way the reference's LoadImage does. */
export function decodeImageFile(bytes: Uint8Array): { image: ImageBatch; mask: MaskBatch } {
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    throw new PngError('this is a JPEG image; the local engine only supports PNG images');
  }
  if (!hasPngSignature(bytes)) throw new PngError('unrecognised image format; the local engine only supports PNG images');
  const { image, mask } = pngToImageBatch(bytes);
  if (mask) return { image, mask: { width: image.width, height: image.height, count: 1, data: mask } };
  // Without alpha the reference emits a 64x64 zero mask, not one of the image's size.
  return { image, mask: createMaskBatch(64, 64, 1) };
}
