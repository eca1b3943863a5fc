// A JSON answer written while it is produced, for bodies too large to hold
// whole (the cloud queue and history carry every job's workflow). The pieces
// are pulled one at a time as the client reads, so a slow reader slows the
// producer and one that leaves stops it. A failure after the status went out
// can only cut the body short: it is logged, and the stream errors, which an
// adapter turns into a broken connection (never a complete-looking body).
import { errorText } from '../log.ts';
import type { Logger } from '../types.ts';

const encoder = new TextEncoder();

export function jsonStream(pieces: AsyncIterable<string>, init: ResponseInit, logger: Logger): Response {
  const iterator = pieces[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          // An empty piece would enqueue nothing and leave the reader waiting: take the next.
          for (;;) {
            const next = await iterator.next();
            if (next.done) return controller.close();
            if (next.value !== '') return controller.enqueue(encoder.encode(next.value));
          }
        } catch (err) {
          logger.error('JSON body failed after the answer began', { error: errorText(err) });
          controller.error(err);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    // Nothing is made ahead of the reader.
    { highWaterMark: 0 },
  );
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return new Response(body, { ...init, headers });
}
