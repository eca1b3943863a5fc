// Splits a byte stream into NDJSON lines as the bytes arrive, holding at most
// one unfinished line (capped), never the whole body.
export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
}

export async function* ndjsonLines(chunks: AsyncIterable<Uint8Array>, maxLineBytes: number): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const take = (tail: Uint8Array): string => {
    const whole = new Uint8Array(pendingBytes + tail.length);
    let at = 0;
    for (const p of pending) {
      whole.set(p, at);
      at += p.length;
    }
    whole.set(tail, at);
    pending = [];
    pendingBytes = 0;
    return decoder.decode(whole).replace(/\r$/, '');
  };
  for await (const chunk of chunks) {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
      if (pendingBytes + nl - from > maxLineBytes) throw new LineTooLongError(`a line is longer than ${maxLineBytes} bytes`);
      const line = take(chunk.subarray(from, nl));
      from = nl + 1;
      if (line.trim() !== '') yield line;
    }
    if (from < chunk.length) {
      pendingBytes += chunk.length - from;
      if (pendingBytes > maxLineBytes) throw new LineTooLongError(`a line is longer than ${maxLineBytes} bytes`);
      // Copied: the chunk's memory may be reused once the next one is read.
      pending.push(chunk.slice(from));
    }
  }
  if (pendingBytes > 0) {
    const line = take(new Uint8Array(0));
    if (line.trim() !== '') yield line;
  }
}
