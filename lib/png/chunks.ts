// PNG container framing: the signature, the error type every codec failure
// uses, and reading/writing length-type-data-CRC chunks.
import { crc32 } from './crc.ts';

export const PNG_SIGNATURE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Any problem with a PNG's bytes; `exception_type` is what an execution_error reports. */
export class PngError extends Error {
  override name = 'PngError';
  readonly exception_type = 'PngError';
}

/** Decoding would take more memory than the caller allows (PngLimits.maxBytes); refused before inflating. */
export class PngMemoryError extends PngError {
  override name = 'PngMemoryError';
  constructor(
    readonly width: number,
    readonly height: number,
    /** What the decode would hold at its peak. */
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`PNG is ${width}x${height}: decoding it needs ${bytes} bytes, more than the ${maxBytes} allowed`);
  }
}

export interface PngChunk {
  type: string;
  data: Uint8Array;
}

export function hasPngSignature(bytes: Uint8Array): boolean {
  if (bytes.length < PNG_SIGNATURE.length) return false;
  return PNG_SIGNATURE.every((b, i) => bytes[i] === b);
}

function typeName(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
}

/**
 * Yields chunks after the signature, checking each CRC. Chunk data are views
 * into `bytes` (no copies). Stops after IEND; running out of bytes first is
 * reported as truncation, because that is what a cut download looks like.
 */
export function* readChunks(bytes: Uint8Array): Generator<PngChunk> {
  if (!hasPngSignature(bytes)) throw new PngError('not a PNG file (bad signature)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = PNG_SIGNATURE.length;
  for (;;) {
    if (at + 12 > bytes.length) throw new PngError('PNG is truncated (missing IEND chunk)');
    const length = view.getUint32(at);
    const type = typeName(bytes, at + 4);
    if (!/^[A-Za-z]{4}$/.test(type)) throw new PngError(`PNG chunk has an invalid type at byte ${at + 4}`);
    if (length > 0x7fffffff || at + 12 + length > bytes.length) {
      throw new PngError(`PNG is truncated (chunk ${type} needs ${length} bytes)`);
    }
    const typeAndData = bytes.subarray(at + 4, at + 8 + length);
    const expected = view.getUint32(at + 8 + length);
    if (crc32(typeAndData) !== expected) throw new PngError(`PNG chunk ${type} has a CRC mismatch`);
    yield { type, data: typeAndData.subarray(4) };
    at += 12 + length;
    if (type === 'IEND') return;
  }
}

/** Frames one chunk: big-endian length, type, data, CRC over type + data. */
export function writeChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}
