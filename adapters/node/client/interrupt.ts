// Ctrl-C while a client command runs: the first SIGINT aborts `signal`, so
// the command can cancel what it started (the job) before it exits 130; a
// second one exits at once, for a server that does not answer the cancel.
import { EXIT_INTERRUPTED } from './errors.ts';

export interface Interrupt {
  readonly signal: AbortSignal;
  /** Removes the handler: Ctrl-C goes back to ending the process. */
  dispose(): void;
}

export function watchInterrupt(): Interrupt {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(EXIT_INTERRUPTED);
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => void process.off('SIGINT', onSigint) };
}
