// `Response.json`, keeping integers beyond 2^53 exact (lib/json.ts): answers
// that may echo a workflow's values (its errors, node definitions with the
// engine server's 2^64 - 1 maxima, a job's metadata) go through here.
import { stringifyJson } from '../../lib/json.ts';

export function respondJson(value: unknown, init: ResponseInit = {}): Response {
  const text = stringifyJson(value) as string | undefined;
  // As Response.json does: undefined, a function or a symbol has no JSON form.
  if (text === undefined) throw new TypeError('Value is not JSON serializable');
  return respondJsonText(text, init);
}

/** A JSON answer over text already serialized. */
export function respondJsonText(text: string, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return new Response(text, { status: init.status, statusText: init.statusText, headers });
}
