// Validation of ByteRange shared by the blob stores, so every implementation
// rejects the same malformed ranges (HTTP range parsing happens in the core).
import type { ByteRange } from './types.ts';

/** Throws RangeError unless 0 <= start <= end; an end past the object is allowed (clamped on read). */
export function checkByteRange(range: ByteRange): void {
  const ok = Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end);
  if (!ok || range.start < 0 || range.end < range.start) {
    throw new RangeError(`invalid byte range ${range.start}-${range.end}`);
  }
}
