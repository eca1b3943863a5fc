// What the local generator can tell of a base64 PNG key frame from its first
// bytes alone: whether its header (IHDR) is sound and its size within the
// generator's key-frame limits. Checked when the request arrives, so a frame
// that would only fail at decoding (a huge declared size, a broken header) is
// a 400 before anything is charged, and only the head is decoded for it.
import { decodeBase64Ref } from '../../../engine/local/video/image-ref.ts';
import { KEY_FRAME_LIMITS } from '../../../engine/local/video/render.ts';
import { PngError, readChunks } from '../../../engine/local/png/chunks.ts';
import { parseHeader } from '../../../engine/local/png/header.ts';

/** Signature (8), then the IHDR chunk: length (4), type (4), data (13), CRC (4). */
const HEAD_BYTES = 33;
const HEAD_CHARS = Math.ceil(HEAD_BYTES / 3) * 4;
/** Characters of the ref scanned for the head; line breaks in base64 are few. */
const HEAD_WINDOW = 64 * HEAD_CHARS;

/** The first bytes of a (valid) base64 ref, decoding only its head. */
function headOf(ref: string): Uint8Array | null {
  // A data: URI's base64 starts after its comma; bare base64 has none.
  const start = ref.indexOf(',') + 1;
  const text = ref.slice(start, start + HEAD_WINDOW).replace(/\s+/g, '');
  // A tiny image, or more whitespace than the window holds: the whole ref is small or rare enough to decode.
  return text.length >= HEAD_CHARS ? decodeBase64Ref(text.slice(0, HEAD_CHARS)) : decodeBase64Ref(ref);
}

const ascii = (b: Uint8Array) => String.fromCharCode(...b);

/** Why the local generator cannot take this base64 PNG key frame, as far as its header shows, or null. */
export function pngKeyFrameProblem(ref: string): string | null {
  const head = headOf(ref)?.subarray(0, HEAD_BYTES);
  if (!head) return 'is not valid base64';
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
