// Rate-limits progress pushes (~2/s by default) without losing the last word:
// the first value goes out at once (or, `startClosed`, when the first window
// ends), later ones at most once per window, and
// the newest value pushed during a window is always delivered when it ends.
// Each progress snapshot is complete, so dropping the ones in between is safe.

/** The clock and timer the throttle runs on; tests inject a fake one. */
export interface ThrottleClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: ThrottleClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface Throttle<T> {
  /** Delivers now if the window allows, otherwise keeps `value` (replacing any older pending one). */
  push(value: T): void;
  /** Delivers the pending value immediately, if any (e.g. before a terminal status). */
  flush(): void;
  /** Drops the pending value and its timer; later pushes start afresh. */
  cancel(): void;
  readonly pending: boolean;
}

export interface ThrottleOptions {
  intervalMs?: number;
  clock?: ThrottleClock;
  /** The first window starts when the throttle is made: the first value waits for its end, not going out at once. */
  startClosed?: boolean;
}

export function createThrottle<T>(deliver: (value: T) => void, options: ThrottleOptions = {}): Throttle<T> {
  const intervalMs = options.intervalMs ?? 500;
  const clock = options.clock ?? systemClock;
  let lastSent = options.startClosed ? clock.now() : -Infinity;
  let timer: unknown = null;
  let hasPending = false;
  let pendingValue: T | undefined;

  function send(value: T) {
    lastSent = clock.now();
    deliver(value);
  }

  function takePending(): T {
    const value = pendingValue as T;
    hasPending = false;
    pendingValue = undefined;
    return value;
  }

  function clearTimer() {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
  }

  function onTimer() {
    timer = null;
    if (hasPending) send(takePending());
  }

  return {
    push(value) {
      const wait = lastSent + intervalMs - clock.now();
      if (timer === null && wait <= 0) {
        send(value);
        return;
      }
      hasPending = true;
      pendingValue = value;
      if (timer === null) timer = clock.setTimeout(onTimer, wait);
    },
    flush() {
      clearTimer();
      if (hasPending) send(takePending());
    },
    cancel() {
      clearTimer();
      takePending();
    },
    get pending() {
      return hasPending;
    },
  };
}
