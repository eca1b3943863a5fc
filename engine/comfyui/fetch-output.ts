// Reads one file from the worker's /view for a consumer (the commit into our
// store, or a hash). A 5xx, a connection that fails or a transfer that breaks
// off is tried again a few times with a growing pause: a busy worker's file
// server hiccups while the job itself is fine. A 4xx is final (the file is
// not there), and so is the consumer's own failure (our store).
import { pause } from '../../lib/pause.ts';
import { type ViewedFile, type WorkerClient, WorkerHttpError, WorkerUnreachable } from './worker-client.ts';

export interface ViewRetries {
  tries: number;
  firstDelayMs: number;
}

export const VIEW_RETRIES: ViewRetries = { tries: 3, firstDelayMs: 200 };

export async function withView<T>(
  client: WorkerClient,
  ref: { filename: string; subfolder: string; type: string },
  signal: AbortSignal,
  consume: (file: ViewedFile) => Promise<T>,
  retries: ViewRetries = VIEW_RETRIES,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted();
    let file: ViewedFile | null = null;
    let broke: unknown = null;
    try {
      file = await client.view(ref, signal);
      const source = file.body;
      // Tells a transfer that broke off (worth another try) from a failure of the consumer.
      const watched = (async function* () {
        try {
          yield* source;
        } catch (err) {
          broke = err;
          throw err;
        }
      })();
      return await consume({ ...file, body: watched });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const failure =
        broke !== null
          ? new WorkerUnreachable(`view ${ref.filename}: the transfer broke off (${broke instanceof Error ? broke.message : String(broke)})`)
          : err;
      const transient = failure instanceof WorkerUnreachable || (failure instanceof WorkerHttpError && failure.status >= 500);
      if (!transient || attempt >= retries.tries) throw failure;
      await pause(retries.firstDelayMs * 2 ** (attempt - 1), signal);
    } finally {
      // A consumer that stopped part-way leaves the response open; free the connection.
      file?.body.destroy?.();
    }
  }
}
