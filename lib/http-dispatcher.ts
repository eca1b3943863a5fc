// An undici dispatcher (its Agent, Pool, or any Dispatcher), declared by the
// one method every dispatcher has, so the public types of the packages that
// take one (the worker engine, the upstream providers) do not name undici's
// own: it is only handed on to undici.
export interface HttpDispatcher {
  dispatch(options: object, handler: object): boolean;
}
