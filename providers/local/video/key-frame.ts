// What the local generator can tell of a base64 key frame from its first
// bytes alone: whether it is a PNG (the one format it reads), whether its
// header (IHDR) is sound and its size within the generator's key-frame limits. Checked when the request arrives, so a frame
// that would only fail at decoding (a huge declared size, a broken header) is
// a 400 before anything is charged, and only the head is decoded for it.
import { base64RefHead, sniffImage } from '../../../lib/image/ref.ts';
import { PngError, readChunks } from '../../../lib/png/chunks.ts';
import { parseHeader } from '../../../lib/png/header.ts';
import { KEY_FRAME_LIMITS } from './render.ts';

/** Signature (8), then the IHDR chunk: length (4), type (4), data (13), CRC (4). */
const HEAD_BYTES = 33;

const ascii = (b: Uint8Array) => String.fromCharCode(...b);

/**
 * Why the local generator cannot take this base64 key frame, as far as its
 * head shows, or null. What is not an image at all is the request schema's
 * to refuse.
 */
export function localKeyFrameProblem(ref: string): string | null {
  const head = base64RefHead(ref, HEAD_BYTES);
  const kind = head && sniffImage(head);
  if (!kind) return null;
  if (kind !== 'png') return `the local generator reads PNG images only, not ${kind.toUpperCase()}`;
  // Checked before reading the chunk: on a head alone, a longer first chunk would read as a truncated file.
  if (head.length < HEAD_BYTES || ascii(head.subarray(12, 16)) !== 'IHDR' || new DataView(head.buffer, head.byteOffset).getUint32(8) !== 13) {
    return 'the PNG does not start with a valid IHDR header';
  }
  try {
    const [ihdr] = readChunks(head);
    parseHeader(ihdr.data, KEY_FRAME_LIMITS);
    return null;
  } catch (err) {
    if (err instanceof PngError) return err.message;
    throw err;
  }
}
