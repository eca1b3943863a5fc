// Reads one file from the worker's /view for a consumer (the commit into our
// store, or a hash), and frees the connection whatever the consumer did. A
// transfer that breaks off is the worker's fault (unreachable), not the
// consumer's.
import { WorkerUnreachable, type ViewedFile, type WorkerClient } from './worker-client.ts';

export async function withView<T>(
  client: WorkerClient,
  ref: { filename: string; subfolder: string; type: string },
  signal: AbortSignal,
  consume: (file: ViewedFile) => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  let file: ViewedFile | null = null;
  let broke: unknown = null;
  try {
    file = await client.view(ref, signal);
    const source = file.body;
    // Tells a transfer that broke off from a failure of the consumer.
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
    if (broke !== null) throw new WorkerUnreachable(`view ${ref.filename}: the transfer broke off (${broke instanceof Error ? broke.message : String(broke)})`);
    throw err;
  } finally {
    // A consumer that stopped part-way leaves the response open; free the connection.
    file?.body.destroy?.();
  }
}
