// The bytes of a ranged GET, exactly as asked. A server may answer a Range
// with more than it was asked for (200 with the whole object; some
// S3-compatible servers widen the range), and Content-Range says which
// bytes came, so the body is cut down to the range here when it differs.
import type { ByteRange } from '../types.ts';

/** First byte offset of the body: from `Content-Range: bytes a-b/n` of a 206, 0 for a 200. */
function servedStart(response: Response): number {
  if (response.status !== 206) return 0;
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  if (!m) throw new Error(`S3 GetObject: unreadable Content-Range ${JSON.stringify(response.headers.get('content-range'))}`);
  return Number(m[1]);
}

/** Drops `skip` bytes, passes `take`, then ends the stream and cancels the rest of the download. */
function slice(body: ReadableStream<Uint8Array>, skip: number, take: number): ReadableStream<Uint8Array> {
  let toSkip = skip;
  let left = take;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const from = Math.min(toSkip, chunk.length);
        toSkip -= from;
        const part = chunk.subarray(from, from + Math.min(left, chunk.length - from));
        left -= part.length;
        if (part.length > 0) controller.enqueue(part);
        if (left === 0) controller.terminate();
      },
    }),
  );
}

/** The response body limited to `range` (inclusive; an end past the object just ends with it). */
export function rangeBody(response: Response, range: ByteRange): ReadableStream<Uint8Array> {
  const body = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  const start = servedStart(response);
  if (start > range.start) {
    void body.cancel();
    throw new Error(`S3 GetObject: asked for bytes from ${range.start}, got them from ${start}`);
  }
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  const wanted = range.end - range.start + 1;
  // The usual case: the server sent exactly the range (or its clamped tail); hand its stream over untouched.
  if (start === range.start && Number.isFinite(length) && length <= wanted) return body;
  return slice(body, range.start - start, wanted);
}
