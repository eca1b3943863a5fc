// The signal of a request converted from Node: it aborts when the client goes
// away (the response closed before it finished), made only when a handler
// reads it, since most never do.
import type { ServerResponse } from 'node:http';

/** The client left: the response closed before it was finished. */
const clientGone = (res: ServerResponse) => res.closed && !res.writableFinished;

export function clientSignal(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  if (clientGone(res)) abort.abort();
  // 'close' also follows a normal finish; only an unfinished response means the client left.
  else if (!res.closed) res.once('close', () => clientGone(res) && abort.abort());
  return abort.signal;
}
