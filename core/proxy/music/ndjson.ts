// A generation's events as an NDJSON body: one JSON object per line, each
// line enqueued as soon as the provider yields it and the next pulled only
// when the client has taken the last, so a slow reader slows the generator
// and one that leaves stops it. A failure after the first line ends the
// stream with a terminal `error` event (the status is already sent).

import { errorText } from '../../log.ts';
import type { Logger } from '../../types.ts';
import { GENERIC_UPSTREAM } from './errors.ts';

const encoder = new TextEncoder();
const line = (event: unknown) => encoder.encode(`${JSON.stringify(event)}\n`);

export function ndjsonBody(
  first: unknown,
  rest: AsyncIterator<unknown>,
  opts: { abort: AbortController; logger: Logger; done: () => void },
): ReadableStream<Uint8Array> {
  let finished = false;
  const finish = async (cancel: boolean) => {
    if (finished) return;
    finished = true;
    if (cancel) opts.abort.abort();
    try {
      await rest.return?.();
    } catch {
      // The generator is being dropped; how it ends no longer matters.
    }
    opts.done();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(line(first));
      },
      async pull(controller) {
        let next: IteratorResult<unknown>;
        try {
          next = await rest.next();
        } catch (err) {
          if (opts.abort.signal.aborted) return;
          opts.logger.error('music stream failed after it began', { error: errorText(err) });
          controller.enqueue(line({ type: 'error', code: 'upstream_error', message: GENERIC_UPSTREAM }));
          controller.close();
          await finish(false);
          return;
        }
        if (next.done) {
          controller.close();
          await finish(false);
        } else {
          controller.enqueue(line(next.value));
        }
      },
      async cancel() {
        await finish(true);
      },
    },
    // Nothing is made ahead of the reader.
    { highWaterMark: 0 },
  );
}
