// Work a request starts but does not wait for (content scans, blob
// collection): run after the response, failures logged, and awaited by
// idle() and close() so a stopping service leaves none half done.
import { errorText } from './log.ts';
import type { Logger } from './types.ts';

export interface BackgroundTasks {
  /** Runs `work` on a later task; an error is logged under `label`. */
  run(label: string, work: () => Promise<void>): void;
  /** Resolves when every task started so far (and any they started) has ended. */
  idle(): Promise<void>;
}

export function createBackgroundTasks(logger: Logger): BackgroundTasks {
  const pending = new Set<Promise<void>>();
  return {
    run(label, work) {
      // Started on a later task so it can never delay the response being returned.
      const p = new Promise<void>((resolve) => setTimeout(resolve, 0))
        .then(work)
        .catch((err) => logger.error(`background task failed: ${label}`, { error: errorText(err) }))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    async idle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
