// Whole bodies from chunks: joined once, and read from a stream with a
// limit that holds while it streams, not after.

/** The chunks one after the other in a new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Reads a whole stream, cancelling it and calling `tooBig` (which must throw)
 * as soon as more than `maxBytes` arrived.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array>,
  maxBytes = Infinity,
  tooBig: (received: number) => never = (n) => {
    throw new RangeError(`body exceeds ${maxBytes} bytes (${n})`);
  },
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
  return concatBytes(parts);
}
