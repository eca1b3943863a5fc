// A wait that the service's shutdown or a job's cancel cuts short, shared by
// the retry and poll loops of the core and the local engine's nodes.

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}
