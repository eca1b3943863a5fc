// AbortSignal.any for a signal needed only for a while. Node's costs some
// 17 us a call (twice per job on the worker engine), and it ties the result to
// each source through a WeakRef that only a finalizer removes: a source that
// lives long (a worker's) collects one per job until collections catch up.
// This one listens to each source and stops listening on `release()`.

export interface AnySignal {
  /** Aborts with the reason of the first source that aborts (at once if one already has). */
  readonly signal: AbortSignal;
  /** Stops following the sources; the signal stays as it is. Idempotent. */
  release(): void;
}

export function anySignal(sources: readonly AbortSignal[]): AnySignal {
  const controller = new AbortController();
  const already = sources.find((s) => s.aborted);
  if (already) {
    controller.abort(already.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const release = () => {
    for (const s of sources) s.removeEventListener('abort', onAbort);
  };
  function onAbort(this: AbortSignal) {
    release();
    controller.abort(this.reason);
  }
  for (const s of sources) s.addEventListener('abort', onAbort);
  return { signal: controller.signal, release };
}
