// The error of a job whose worker went away (unreachable, restarted, or
// answering 5xx) rather than of the workflow: the engine may run the job again
// on another worker, also after some of its outputs were committed (engine.ts
// says why that is safe).
import { ExecutionError } from '../types.ts';
import { WORKER_LOST } from './exception-types.ts';

export class WorkerLostError extends ExecutionError {
  constructor(
    message: string,
    readonly worker: string,
  ) {
    super(message, WORKER_LOST);
  }
}

/** Sends the prompt's cancel: the worker's per-job route when it has one, else a queue delete plus an interrupt if it is running. */
export async function cancelOnWorker(client: import('./worker-client.ts').WorkerClient, promptId: string): Promise<void> {
  if (await client.cancelJob(promptId).catch(() => false)) return;
  // Delete first: a pending prompt then never starts. Interrupt only when it is ours that runs,
  // as an older worker ignores the prompt id and would stop whatever is running.
  await client.deleteQueued(promptId).catch(() => {});
  const queue = await client.queue().catch(() => null);
  if (!queue || queue.running.includes(promptId)) await client.interrupt(promptId).catch(() => {});
}
