// What an uploaded file is: its media type from its first bytes (magic
// numbers), else from what the client declared, else from its extension; and
// a PNG's size read from its header, so an image beyond the contract's limits
// is refused before anything is stored. The first bytes are kept while the
// file streams through (nothing else of it is held).
import { DEFAULT_LIMITS } from '../../lib/png/index.ts';

export const PREFIX_BYTES = 64;

const ascii = (b: Uint8Array, at: number, s: string) => [...s].every((c, i) => b[at + i] === c.charCodeAt(0));

/** The media type the leading bytes announce, or null. */
export function sniffType(b: Uint8Array): string | null {
  if (b.length >= 8 && b[0] === 0x89 && ascii(b, 1, 'PNG\r\n\x1a\n')) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return 'image/gif';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return 'image/webp';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE')) return 'audio/wav';
  if (ascii(b, 0, 'fLaC')) return 'audio/flac';
  if (ascii(b, 0, 'ID3')) return 'audio/mpeg';
  if (ascii(b, 4, 'ftyp')) return 'video/mp4';
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return 'video/webm';
  return null;
}

const TYPE_BY_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp4: 'video/mp4',
  webm: 'video/webm',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  flac: 'audio/flac',
  txt: 'text/plain',
  json: 'application/json',
};

const GENERIC = new Set(['', 'application/octet-stream', 'binary/octet-stream']);
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/** Sniffed type, else the declared one (if specific and well formed), else by extension, else octet-stream. */
export function contentTypeOf(prefix: Uint8Array, declared: string | null, fileName: string | null): string {
  const sniffed = sniffType(prefix);
  if (sniffed) return sniffed;
  const given = (declared ?? '').split(';')[0].trim().toLowerCase();
  if (!GENERIC.has(given) && MEDIA_TYPE.test(given)) return given;
  const ext = /\.([A-Za-z0-9]{1,10})$/.exec(fileName ?? '')?.[1].toLowerCase();
  return (ext && TYPE_BY_EXT[ext]) || 'application/octet-stream';
}

/** Width and height from a PNG's IHDR, or null when the prefix is not a PNG's. */
export function pngSize(b: Uint8Array): { width: number; height: number } | null {
  if (b.length < 24 || sniffType(b) !== 'image/png' || !ascii(b, 12, 'IHDR')) return null;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

/** Why an image of this size is refused (the contract's per-edge and pixel limits), or null. */
export function imageSizeProblem(size: { width: number; height: number }): string | null {
  const { maxSide, maxPixels } = DEFAULT_LIMITS;
  if (size.width > maxSide || size.height > maxSide || size.width * size.height > maxPixels) {
    return `the image is ${size.width}x${size.height}; at most ${maxSide} px per edge and ${maxPixels} pixels are accepted`;
  }
  return null;
}

/** Passes the chunks through unchanged, keeping a copy of the first `n` bytes. */
export function keepPrefix(body: AsyncIterable<Uint8Array>, n = PREFIX_BYTES) {
  let prefix = new Uint8Array(0);
  async function* pass() {
    for await (const chunk of body) {
      if (prefix.length < n) {
        const take = chunk.subarray(0, n - prefix.length);
        const next = new Uint8Array(prefix.length + take.length);
        next.set(prefix);
        next.set(take, prefix.length);
        prefix = next;
      }
      yield chunk;
    }
  }
  return { body: pass(), prefix: () => prefix };
}
