// A run's events in the worker's order: each step goes out once the ones
// before it are out, so an `executed` that waits for its node's files to be
// committed holds back what the worker said after it, and nothing overtakes
// it. The first step that fails stops the rest; its error is kept.
export interface EventOrder {
  /** Queues a step after every step queued before it; skipped once stopped or after a failure. */
  push(step: () => void | Promise<void>): void;
  /** Resolves once every step queued so far ran or was skipped. */
  drained(): Promise<void>;
  /** The first failure of a step. */
  failure(): { error: unknown } | null;
}

export function createEventOrder(stopped: () => boolean, onFailure: (error: unknown) => void): EventOrder {
  let tail: Promise<void> = Promise.resolve();
  let failed: { error: unknown } | null = null;
  return {
    push(step) {
      tail = tail
        .then(() => (stopped() || failed ? undefined : step()))
        .catch((error: unknown) => {
          if (failed) return;
          failed = { error };
          onFailure(error);
        });
    },
    drained: () => tail,
    failure: () => failed,
  };
}
