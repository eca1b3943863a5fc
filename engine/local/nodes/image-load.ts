// Turning fetched or stored bytes into IMAGE + MASK, shared by LoadImage and
// LoadImageFromURL: a bounded stream reader and format sniffing (the local
// engine decodes PNG only; a JPEG gets a clear error rather than garbage).
import type { ImageBatch } from '../image.ts';
import { createMaskBatch, type MaskBatch } from '../mask.ts';
import { hasPngSignature, PngError, pngToImageBatch } from '../png/index.ts';

/**
 * Reads a whole stream, calling `tooBig` (which must throw) as soon as more
 * than `maxBytes` arrive: the limit holds while streaming, not after.
 */
export async function readBody(
  body: ReadableStream<Uint8Array>,
  maxBytes = Infinity,
  tooBig: (received: number) => never = (n) => { throw new RangeError(`body exceeds ${maxBytes} bytes (${n})`); },
): Promise<Uint8Array> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        tooBig(total);
      }
      parts.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

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
