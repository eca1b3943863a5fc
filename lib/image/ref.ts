// Key frames as the video request gives them: an http(s) URL, or the image's
// bytes in base64 (bare or as a `data:image/...;base64,` URI). Shared by the
// request validation (which only sniffs) and the local generator (which
// fetches through the outbound guard and decodes).
import { fromBase64 } from '../base64.ts';
import { downloadBytes, type OutboundRequest, parseOutboundUrl } from '../net/url-guard.ts';

export type ImageKind = 'png' | 'jpeg' | 'webp';

const MAX_URL_CHARS = 2048;
const DATA_URI = /^data:image\/[\w.+-]+;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function isUrlRef(ref: string): boolean {
  return /^https?:\/\//i.test(ref.trim());
}

/** The base64 text of a non-URL ref, whitespace and data-URI prefix removed. */
function base64Text(ref: string): string {
  return ref.trim().replace(DATA_URI, '').replace(/\s+/g, '');
}

/** Bytes a base64 ref decodes to, or null when it is not base64. */
export function decodeBase64Ref(ref: string): Uint8Array | null {
  const text = base64Text(ref);
  if (text.length === 0 || text.length % 4 !== 0 || !BASE64.test(text)) return null;
  return fromBase64(text);
}

/** How many bytes base64 text (already cleaned) decodes to, without decoding it. */
function decodedSize(text: string): number {
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - pad;
}

export function sniffImage(bytes: Uint8Array): ImageKind | null {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp';
  return null;
}

/**
 * The first `bytes` bytes of a base64 ref (fewer when it is shorter), or null
 * when its head is not base64. Only a window at the start of a large ref is
 * cleaned and decoded; a tiny ref, or one with more whitespace than the
 * window holds, is decoded whole.
 */
export function base64RefHead(ref: string, bytes: number): Uint8Array | null {
  const chars = Math.ceil(bytes / 3) * 4;
  const trimmed = ref.trimStart();
  const start = DATA_URI.exec(trimmed)?.[0].length ?? 0;
  const text = trimmed.slice(start, start + 64 * chars).replace(/\s+/g, '');
  return (text.length >= chars ? decodeBase64Ref(text.slice(0, chars)) : decodeBase64Ref(ref))?.subarray(0, bytes) ?? null;
}

/** The image format a base64 ref starts with (only its head is decoded), or null. */
export function base64RefKind(ref: string): ImageKind | null {
  const head = base64RefHead(ref, 12);
  return head ? sniffImage(head) : null;
}

/**
 * What is wrong with a ref as a key image, or null: a URL must be http(s); a
 * base64 ref must decode to a PNG, JPEG or WebP of at most `maxBytes`.
 * Only the head is decoded, so a large image costs nothing here.
 */
export function imageRefProblem(ref: string, maxBytes: number): string | null {
  if (isUrlRef(ref)) {
    if (ref.length > MAX_URL_CHARS) return `a URL must be at most ${MAX_URL_CHARS} characters`;
    try {
      parseOutboundUrl(ref);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }
  const text = base64Text(ref);
  if (text.length === 0) return 'must be a base64 image or an http(s) URL';
  if (text.length % 4 !== 0 || !BASE64.test(text)) return 'must be a base64 image (standard alphabet, padded) or an http(s) URL';
  if (decodedSize(text) > maxBytes) return `the image is larger than ${maxBytes} bytes`;
  if (!base64RefKind(text)) return 'must be a PNG, JPEG or WebP image in base64';
  return null;
}

/** The image bytes of a ref: downloaded through the guard, or decoded. */
export async function loadImageRef(ref: string, request: OutboundRequest & { maxBytes: number }): Promise<Uint8Array> {
  if (isUrlRef(ref)) return (await downloadBytes(parseOutboundUrl(ref), request)).bytes;
  const bytes = decodeBase64Ref(ref);
  if (!bytes) throw new Error('not a base64 image');
  if (bytes.length > request.maxBytes) throw new Error(`the image is larger than ${request.maxBytes} bytes`);
  return bytes;
}
